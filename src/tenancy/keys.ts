import { createHash, timingSafeEqual } from 'node:crypto';
import { randomBase62 } from '../core/random.ts';

/** `mk_` + 32 base62 characters: about 190 bits of entropy. */
export const generateApiKey = (): string => `mk_${randomBase62(32)}`;

export const API_KEY_PATTERN = /^mk_[0-9A-Za-z]{32}$/;

export const hashApiKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

/** The part of a key we keep in clear, to let people recognise it in listings. */
export const keyPrefix = (key: string): string => key.slice(0, 8);

export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}
