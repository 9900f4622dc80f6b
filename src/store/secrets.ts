import type { Conn } from './db.ts';

export interface ServerSecretRow {
  id: string;
  purpose: string;
  /** Base64. */
  secret: string;
  created_at: number;
}

export const secretsRepo = {
  /** The secrets for a purpose, oldest first. */
  byPurpose: (db: Conn, purpose: string): Promise<Pick<ServerSecretRow, 'id' | 'secret'>[]> =>
    db('server_secrets').where({ purpose }).orderBy('created_at').select('id', 'secret'),
  async insert(db: Conn, row: ServerSecretRow): Promise<void> {
    await db('server_secrets').insert(row);
  },
};
