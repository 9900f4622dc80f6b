import { insertedId, type Conn } from './db.ts';
import { uniquely } from './errors.ts';

export interface TemplateRow {
  id: number;
  workspace_id: number;
  /** Unique within the workspace; never all digits, so a send's `template` reads as an id or a name unambiguously. */
  name: string;
  subject: string;
  html: string | null;
  text: string | null;
  created_at: number;
  updated_at: number;
}

export type TemplateChanges = Partial<Pick<TemplateRow, 'name' | 'subject' | 'html' | 'text' | 'updated_at'>>;

export const templatesRepo = {
  /** Throws DuplicateKeyError when the workspace has a template of that name. */
  async insert(db: Conn, row: Omit<TemplateRow, 'id'>): Promise<TemplateRow> {
    const [inserted] = await uniquely('templates', () => db('templates').insert(row).returning('id'));
    return { ...row, id: insertedId(inserted) };
  },
  byId: (db: Conn, id: number): Promise<TemplateRow | undefined> => db('templates').where({ id }).first(),
  byName: (db: Conn, workspaceId: number, name: string): Promise<TemplateRow | undefined> => db('templates').where({ workspace_id: workspaceId, name }).first(),
  /** Newest first, after the keyset cursor `beforeId`. */
  list(db: Conn, workspaceId: number, opts: { beforeId?: number; limit: number }): Promise<TemplateRow[]> {
    const q = db('templates').where({ workspace_id: workspaceId }).orderBy('id', 'desc').limit(opts.limit);
    if (opts.beforeId) q.where('id', '<', opts.beforeId);
    return q;
  },
  /** Throws DuplicateKeyError when a new name is taken in the workspace. */
  async update(db: Conn, id: number, changes: TemplateChanges): Promise<void> {
    await uniquely('templates', () => db('templates').where({ id }).update(changes));
  },
  async remove(db: Conn, id: number): Promise<void> {
    await db('templates').where({ id }).delete();
  },
};
