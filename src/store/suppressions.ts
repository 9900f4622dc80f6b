import type { Conn } from './db.ts';

export type Stream = 'transactional' | 'broadcast';
export type SuppressionReason = 'bounce' | 'complaint' | 'unsubscribe' | 'manual';

export interface SuppressionRow {
  id: number;
  workspace_id: number;
  stream: Stream;
  address: string;
  reason: SuppressionReason;
  email_id: number | null;
  domain: string | null;
  created_at: number;
}

export interface SuppressionFilter {
  workspaceId: number;
  stream?: Stream;
  /** Domain-scoped keys see only entries caused by their domain's mail. */
  domain?: string | null;
  afterId?: number;
  /** Only addresses containing this text (addresses are kept in lower case). */
  search?: string;
  limit: number;
}

/**
 * On SQLite knex writes a multi-row `insert ... on conflict` as one compound SELECT, which
 * SQLite limits to 500 terms.
 */
const ROWS_PER_STATEMENT = 500;

export const suppressionsRepo = {
  /** Inserts unless present; returns whether a row was added. */
  async add(db: Conn, row: Omit<SuppressionRow, 'id'>): Promise<boolean> {
    const inserted = await db('suppressions')
      .insert({ ...row, address: row.address.toLowerCase() })
      .onConflict(['workspace_id', 'stream', 'address'])
      .ignore()
      .returning('id');
    return inserted.length > 0;
  },
  /**
   * Inserts the rows not present yet, `ROWS_PER_STATEMENT` to a statement (run it in a
   * transaction to make a larger call atomic); returns how many were new. Rows repeating one
   * another count once.
   */
  async addMany(db: Conn, rows: Omit<SuppressionRow, 'id'>[]): Promise<number> {
    let added = 0;
    for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
      const inserted = await db('suppressions')
        .insert(rows.slice(i, i + ROWS_PER_STATEMENT).map((row) => ({ ...row, address: row.address.toLowerCase() })))
        .onConflict(['workspace_id', 'stream', 'address'])
        .ignore()
        .returning('id');
      added += inserted.length;
    }
    return added;
  },
  find: (db: Conn, workspaceId: number, stream: Stream, address: string): Promise<SuppressionRow | undefined> =>
    db('suppressions').where({ workspace_id: workspaceId, stream, address: address.toLowerCase() }).first(),
  /** The subset of `addresses` (lowercased) suppressed on a stream. */
  async suppressedAmong(db: Conn, workspaceId: number, stream: Stream, addresses: string[]): Promise<Set<string>> {
    if (addresses.length === 0) return new Set();
    const rows = await suppressionsRepo.amongQuery(db, workspaceId, stream, addresses);
    return new Set(rows.map((r: { address: string }) => r.address));
  },
  /** `suppressedAmong` as a query not yet run, one column (`address`), to send with another. */
  amongQuery: (db: Conn, workspaceId: number, stream: Stream, addresses: string[]) =>
    db('suppressions')
      .where({ workspace_id: workspaceId, stream })
      .whereIn(
        'address',
        addresses.map((a) => a.toLowerCase()),
      )
      .select('address'),
  list(db: Conn, f: SuppressionFilter): Promise<SuppressionRow[]> {
    const q = db('suppressions').where({ workspace_id: f.workspaceId }).orderBy('id').limit(f.limit);
    if (f.stream) q.where({ stream: f.stream });
    if (f.domain) q.where({ domain: f.domain });
    if (f.afterId) q.where('id', '>', f.afterId);
    if (f.search) q.whereRaw("address like ? escape '\\'", [`%${f.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`]);
    return q;
  },
  async remove(db: Conn, workspaceId: number, stream: Stream, address: string): Promise<boolean> {
    return (await db('suppressions').where({ workspace_id: workspaceId, stream, address: address.toLowerCase() }).delete()) > 0;
  },
};
