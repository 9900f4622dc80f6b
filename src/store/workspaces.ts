import { insertedId, type Conn } from './db.ts';

export interface WorkspaceRow {
  id: number;
  name: string;
  plan: string;
  rate_per_minute: number;
  rate_per_hour: number;
  created_at: number;
}

export const workspaces = {
  async insert(db: Conn, row: Omit<WorkspaceRow, 'id'>): Promise<WorkspaceRow> {
    const [inserted] = await db('workspaces').insert(row).returning('id');
    return { ...row, id: insertedId(inserted) };
  },
  byName: (db: Conn, name: string): Promise<WorkspaceRow | undefined> => db('workspaces').where({ name }).first(),
  byId: (db: Conn, id: number): Promise<WorkspaceRow | undefined> => db('workspaces').where({ id }).first(),
  list: (db: Conn): Promise<WorkspaceRow[]> => db('workspaces').orderBy('id'),
  async setLimits(db: Conn, id: number, limits: { plan?: string; rate_per_minute: number; rate_per_hour: number }) {
    await db('workspaces').where({ id }).update(limits);
  },
};
