import { bool, insertedId, type Conn } from './db.ts';

export interface DomainRow {
  id: number;
  workspace_id: number;
  name: string;
  status: 'pending' | 'verified';
  /** dns: the published records matched; sandbox: a `.test` domain checked against the sandbox's own records; override: no check. */
  verified_by: 'dns' | 'sandbox' | 'override' | null;
  selector: string;
  dkim_private_key: string;
  dkim_public_key: string;
  open_tracking: boolean;
  click_tracking: boolean;
  return_path_verified: boolean;
  /** JSON: per-record verification results of the last check. */
  verification: string | null;
  created_at: number;
  verified_at: number | null;
  /** The sending pool its mail goes from (one of delivery.pools); null: the workspace's, else the stream's. */
  pool: string | null;
  /** Receives mail for applications (SPEC §14): its routes' recipients are accepted by the inbound MX. */
  inbound: boolean;
}

type NewDomain = Omit<DomainRow, 'id' | 'pool' | 'inbound'> & { pool?: string | null; inbound?: boolean };

const normalise = (row: DomainRow | undefined): DomainRow | undefined =>
  row && {
    ...row,
    open_tracking: bool(row.open_tracking),
    click_tracking: bool(row.click_tracking),
    return_path_verified: bool(row.return_path_verified),
    inbound: bool(row.inbound),
  };

export const domainsRepo = {
  async insert(db: Conn, row: NewDomain): Promise<DomainRow> {
    const [inserted] = await db('domains').insert(row).returning('id');
    return { ...row, pool: row.pool ?? null, inbound: row.inbound ?? false, id: insertedId(inserted) };
  },
  byName: async (db: Conn, name: string) => normalise(await db('domains').where({ name }).first()),
  byId: async (db: Conn, id: number) => normalise(await db('domains').where({ id }).first()),
  async list(db: Conn, filter: { workspaceId?: number; name?: string } = {}): Promise<DomainRow[]> {
    const q = db('domains').orderBy('id');
    if (filter.workspaceId !== undefined) q.where({ workspace_id: filter.workspaceId });
    if (filter.name !== undefined) q.where({ name: filter.name });
    return (await q).map((r: DomainRow) => normalise(r)!);
  },
  async update(db: Conn, id: number, patch: Partial<Omit<DomainRow, 'id'>>): Promise<void> {
    await db('domains').where({ id }).update(patch);
  },
  async remove(db: Conn, id: number): Promise<void> {
    await db('domains').where({ id }).delete();
  },
};
