import { insertedId, type Conn } from './db.ts';

export type SandboxOutcome = 'delivered' | 'bounced' | 'deferred' | 'complained' | 'unsubscribed';

export interface SandboxMessageRow {
  id: number;
  workspace_id: number;
  domain: string;
  email_id: number;
  recipient_id: number;
  mail_from: string;
  rcpt_to: string;
  message_id: string;
  subject: string;
  outcome: SandboxOutcome;
  response: string;
  dkim_result: string;
  dkim_detail: string;
  size: number;
  raw: Buffer;
  captured_at: number;
}

/** Every column but the raw bytes, for lists. */
export type SandboxSummaryRow = Omit<SandboxMessageRow, 'raw'>;

const SUMMARY_COLUMNS = [
  'id',
  'workspace_id',
  'domain',
  'email_id',
  'recipient_id',
  'mail_from',
  'rcpt_to',
  'message_id',
  'subject',
  'outcome',
  'response',
  'dkim_result',
  'dkim_detail',
  'size',
  'captured_at',
];

export interface SandboxFilter {
  /** Absent for the operator at the command line, who sees every workspace. */
  workspaceId?: number;
  /** A domain-scoped key sees only its domain's captures. */
  domain?: string | null;
  emailId?: number;
  beforeId?: number;
  limit: number;
}

function normalise<T extends SandboxSummaryRow>(row: T): T {
  return { ...row, size: Number(row.size), captured_at: Number(row.captured_at) };
}

function scoped(db: Conn, f: Omit<SandboxFilter, 'limit' | 'beforeId'>) {
  const q = db('sandbox_messages');
  if (f.workspaceId !== undefined) q.where({ workspace_id: f.workspaceId });
  if (f.domain) q.where({ domain: f.domain });
  if (f.emailId !== undefined) q.where({ email_id: f.emailId });
  return q;
}

export const sandboxRepo = {
  async insert(db: Conn, row: Omit<SandboxMessageRow, 'id'>): Promise<number> {
    const [inserted] = await db('sandbox_messages').insert(row).returning('id');
    return insertedId(inserted);
  },
  /** Newest first, keyset-paginated by id. */
  async list(db: Conn, f: SandboxFilter): Promise<SandboxSummaryRow[]> {
    const q = scoped(db, f).select(SUMMARY_COLUMNS).orderBy('id', 'desc').limit(f.limit);
    if (f.beforeId !== undefined) q.where('id', '<', f.beforeId);
    return (await q).map((r: SandboxSummaryRow) => normalise(r));
  },
  async byId(db: Conn, id: number, f: Omit<SandboxFilter, 'limit' | 'beforeId'> = {}): Promise<SandboxMessageRow | undefined> {
    const row: SandboxMessageRow | undefined = await scoped(db, f).where({ id }).first();
    return row && normalise(row);
  },
  /** Captures hold whole messages: pruned with message bodies after `retention.days`. */
  prune: (db: Conn, before: number): Promise<number> => db('sandbox_messages').where('captured_at', '<', before).delete(),
};
