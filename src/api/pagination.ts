import { invalid } from '../core/errors.ts';
import { isCanonicalId } from './ids.ts';

/** Keyset cursors are opaque to clients: base64url of the last id seen. */
export const encodeCursor = (id: number): string => Buffer.from(`id:${id}`).toString('base64url');

export function decodeCursor(cursor: string | undefined): number | null {
  if (!cursor) return null;
  const match = /^id:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match || !isCanonicalId(match[1])) throw invalid('Query parameter `cursor` is not a cursor this API returned');
  return Number(match[1]);
}

/** Rows fetched as limit + 1, newest or oldest first, become a page. */
export function toPage<T extends { id: number }, V>(rows: T[], limit: number, view: (row: T) => V) {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  return { data: kept.map(view), next_cursor: more ? encodeCursor(kept[kept.length - 1].id) : null };
}
