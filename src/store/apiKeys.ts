import { insertedId, type Conn } from './db.ts';

export interface ApiKeyRow {
  id: number;
  workspace_id: number;
  name: string;
  prefix: string;
  key_hash: string;
  domain: string | null;
  created_at: number;
  revoked_at: number | null;
}

export interface AuthenticatedKeyRow extends ApiKeyRow {
  rate_per_minute: number;
  rate_per_hour: number;
}

function liveKey(db: Conn, where: Record<string, string | number>): Promise<AuthenticatedKeyRow | undefined> {
  return db('api_keys')
    .join('workspaces', 'workspaces.id', 'api_keys.workspace_id')
    .where(where)
    .whereNull('api_keys.revoked_at')
    .first('api_keys.*', 'workspaces.rate_per_minute', 'workspaces.rate_per_hour');
}

export const apiKeys = {
  async insert(db: Conn, row: Omit<ApiKeyRow, 'id' | 'revoked_at'>): Promise<ApiKeyRow> {
    const [inserted] = await db('api_keys')
      .insert({ ...row, revoked_at: null })
      .returning('id');
    return { ...row, revoked_at: null, id: insertedId(inserted) };
  },
  /** The live key with this hash, joined with its workspace's limits. */
  byHash: (db: Conn, keyHash: string): Promise<AuthenticatedKeyRow | undefined> => liveKey(db, { 'api_keys.key_hash': keyHash }),
  /** The live key with this id, joined with its workspace's limits (a console session names its key by id). */
  liveById: (db: Conn, id: number): Promise<AuthenticatedKeyRow | undefined> => liveKey(db, { 'api_keys.id': id }),
  byId: (db: Conn, id: number): Promise<ApiKeyRow | undefined> => db('api_keys').where({ id }).first(),
  list: (db: Conn, workspaceId?: number): Promise<ApiKeyRow[]> => {
    const q = db('api_keys').orderBy('id');
    return workspaceId === undefined ? q : q.where({ workspace_id: workspaceId });
  },
  async revoke(db: Conn, id: number, at: number): Promise<boolean> {
    const n = await db('api_keys').where({ id }).whereNull('revoked_at').update({ revoked_at: at });
    return n > 0;
  },
};
