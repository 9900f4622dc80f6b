import { insertedId, type Conn } from './db.ts';

export interface WorkspaceRow {
  id: number;
  name: string;
  plan: string;
  rate_per_minute: number;
  rate_per_hour: number;
  created_at: number;
  /** The sending pool its mail goes from (one of delivery.pools) unless its domain names one; null: none. */
  pool: string | null;
}

type NewWorkspace = Omit<WorkspaceRow, 'id' | 'pool'> & { pool?: string | null };

export const workspaces = {
  async insert(db: Conn, row: NewWorkspace): Promise<WorkspaceRow> {
    const [inserted] = await db('workspaces').insert(row).returning('id');
    return { ...row, pool: row.pool ?? null, id: insertedId(inserted) };
  },
  byName: (db: Conn, name: string): Promise<WorkspaceRow | undefined> => db('workspaces').where({ name }).first(),
  byId: (db: Conn, id: number): Promise<WorkspaceRow | undefined> => db('workspaces').where({ id }).first(),
  list: (db: Conn): Promise<WorkspaceRow[]> => db('workspaces').orderBy('id'),
  async setLimits(db: Conn, id: number, limits: { plan?: string; rate_per_minute: number; rate_per_hour: number }) {
    await db('workspaces').where({ id }).update(limits);
  },
  async setPool(db: Conn, id: number, pool: string | null) {
    await db('workspaces').where({ id }).update({ pool });
  },
};
