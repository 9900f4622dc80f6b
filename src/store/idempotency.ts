import type { Conn } from './db.ts';
import { uniquely } from './errors.ts';

export interface IdempotencyRow {
  api_key_id: number;
  idem_key: string;
  request_hash: string;
  response_status: number;
  response_body: string;
  created_at: number;
}

export const idempotencyRepo = {
  /** The record still inside its window, if any. */
  find: (db: Conn, apiKeyId: number, key: string, notBefore: number): Promise<IdempotencyRow | undefined> =>
    db('idempotency_keys').where({ api_key_id: apiKeyId, idem_key: key }).andWhere('created_at', '>=', notBefore).first(),
  /**
   * Stores a result, replacing an expired record of the same key. A live record of the same key
   * (another process committed it first) is a DuplicateKeyError.
   */
  async store(db: Conn, row: IdempotencyRow, notBefore: number): Promise<void> {
    await db('idempotency_keys').where({ api_key_id: row.api_key_id, idem_key: row.idem_key }).andWhere('created_at', '<', notBefore).delete();
    await uniquely('idempotency_keys', () => db('idempotency_keys').insert(row));
  },
  prune: (db: Conn, notBefore: number): Promise<number> => db('idempotency_keys').where('created_at', '<', notBefore).delete(),
};
