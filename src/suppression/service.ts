import { suppressionCause } from './cause.ts';
import { invalid, notFound } from '../core/errors.ts';
import type { Clock } from '../core/ports.ts';
import { iso } from '../core/time.ts';
import { isProblem, parseMailbox } from '../messages/address.ts';
import type { Conn, Db } from '../store/db.ts';
import { suppressionsRepo, type Stream, type SuppressionReason, type SuppressionRow } from '../store/suppressions.ts';

export const STREAMS: Stream[] = ['transactional', 'broadcast'];
export const REASONS: SuppressionReason[] = ['bounce', 'complaint', 'unsubscribe', 'manual'];

export const suppressionView = (row: SuppressionRow) => ({
  address: row.address,
  stream: row.stream,
  reason: row.reason,
  email_id: row.email_id,
  created_at: iso(row.created_at),
});

export function checkStream(stream: string): Stream {
  if (!(STREAMS as string[]).includes(stream)) throw invalid('Field `stream` must be `transactional` or `broadcast`');
  return stream as Stream;
}

/** A bare address, lowercased: suppression matches case-insensitively. */
export function checkAddress(address: string): string {
  const parsed = parseMailbox(address);
  if (isProblem(parsed) || parsed.name !== null) throw invalid(`Field \`address\` is not a valid address: "${address.slice(0, 200)}"`);
  return parsed.address.toLowerCase();
}

/** The two per-stream suppression lists of each workspace. */
export class SuppressionService {
  constructor(private readonly deps: { db: Db; clock: Clock }) {}

  /** Adds an entry unless present (the first reason stays); returns the entry. */
  async add(
    workspaceId: number,
    entry: { address: string; stream: string; reason?: SuppressionReason; emailId?: number | null; domain?: string | null; at?: number },
    conn: Conn = this.deps.db,
  ): Promise<{ row: SuppressionRow; created: boolean }> {
    const stream = checkStream(entry.stream);
    const address = checkAddress(entry.address);
    const created = await suppressionsRepo.add(conn, {
      workspace_id: workspaceId,
      stream,
      address,
      reason: entry.reason ?? 'manual',
      email_id: entry.emailId ?? null,
      domain: entry.domain ?? null,
      created_at: entry.at ?? this.deps.clock.now(),
    });
    return { row: (await suppressionsRepo.find(conn, workspaceId, stream, address))!, created };
  }

  async get(workspaceId: number, stream: string, address: string, domain: string | null = null): Promise<SuppressionRow> {
    const row = await suppressionsRepo.find(this.deps.db, workspaceId, checkStream(stream), address.toLowerCase());
    if (!row || (domain !== null && row.domain !== domain)) throw notFound();
    return row;
  }

  /** An entry with what caused it (see suppressionCause). */
  async explain(workspaceId: number, stream: string, address: string, domain: string | null = null) {
    const row = await this.get(workspaceId, stream, address, domain);
    return { row, cause: await suppressionCause(this.deps.db, row) };
  }

  list(workspaceId: number, opts: { stream?: string; domain?: string | null; afterId?: number; search?: string; limit: number }) {
    return suppressionsRepo.list(this.deps.db, {
      workspaceId,
      stream: opts.stream === undefined ? undefined : checkStream(opts.stream),
      domain: opts.domain,
      afterId: opts.afterId,
      search: opts.search,
      limit: opts.limit,
    });
  }

  /** Adds many entries in one transaction; returns how many were new. */
  async addMany(workspaceId: number, entries: { address: string; stream: Stream; reason: SuppressionReason }[]): Promise<number> {
    const now = this.deps.clock.now();
    let added = 0;
    await this.deps.db.transaction(async (tx) => {
      for (const e of entries) {
        if (await suppressionsRepo.add(tx, { workspace_id: workspaceId, stream: e.stream, address: e.address, reason: e.reason, email_id: null, domain: null, created_at: now })) added += 1;
      }
    });
    return added;
  }

  /** Every entry, for export. */
  async all(workspaceId: number, stream?: string, domain: string | null = null): Promise<SuppressionRow[]> {
    const out: SuppressionRow[] = [];
    for (;;) {
      const page = await this.list(workspaceId, { stream, domain, afterId: out.at(-1)?.id, limit: 1000 });
      out.push(...page);
      if (page.length < 1000) return out;
    }
  }

  async remove(workspaceId: number, stream: string, address: string): Promise<void> {
    if (!(await suppressionsRepo.remove(this.deps.db, workspaceId, checkStream(stream), address))) throw notFound();
  }
}
