import { createHash } from 'node:crypto';
import { invalid } from '../core/errors.ts';

export const IDEMPOTENCY_WINDOW_MS = 24 * 3600_000;
export const MAX_IDEMPOTENCY_KEY = 256;

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** SHA-256 of the body as canonical JSON: the same request with keys in another order matches. */
export const requestHash = (body: unknown): string => createHash('sha256').update(canonical(body)).digest('hex');

export function checkIdempotencyKey(key: string): string {
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY || /[\r\n]/.test(key)) {
    throw invalid(`Idempotency-Key must be 1-${MAX_IDEMPOTENCY_KEY} characters`);
  }
  return key;
}

export interface IdempotencyRequest {
  key: string;
  hash: string;
}
