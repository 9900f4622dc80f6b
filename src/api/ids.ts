import type { FastifyInstance } from 'fastify';
import { notFound } from '../core/errors.ts';

/** Row ids are 32-bit `increments()` columns on PostgreSQL; a larger number names no row. */
export const MAX_ID = 2_147_483_647;

// Canonical decimal only. Ajv's type coercion would read `0x10` as 16, ` 1` as 1 and `1e1` as
// 10, so the raw text is checked before validation coerces it.
const CANONICAL = /^[1-9][0-9]{0,9}$/;

export const isCanonicalId = (text: string): boolean => CANONICAL.test(text) && Number(text) <= MAX_ID;

/** Every `:id` in a path is a canonical decimal id or the request is a 404. */
export function installCanonicalIds(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const id = (request.params as Record<string, unknown> | undefined)?.id;
    if (id !== undefined && !(typeof id === 'string' && isCanonicalId(id))) throw notFound();
  });
}
