import { suppressionCause } from './cause.ts';
import { ServiceError, notFound } from '../core/errors.ts';
import type { Clock } from '../core/ports.ts';
import { iso } from '../core/time.ts';
import type { Conn, Db } from '../store/db.ts';
import { suppressionsRepo, type Stream, type SuppressionReason, type SuppressionRow } from '../store/suppressions.ts';
import { STREAMS, checkAddress, checkStream } from './checks.ts';
import { countLines, nextTurn, readSuppressionCsv, type ImportProblem } from './csv.ts';

/** How bulk work is cut up (config `suppression.*`; smaller in tests to cross page boundaries). */
export interface BulkSettings {
  /** Lines after the header one capped import (an API call) may hold. */
  importMaxRows: number;
  importChunkRows: number;
  exportPageRows: number;
}
const BULK_DEFAULTS: BulkSettings = { importMaxRows: 250_000, importChunkRows: 500, exportPageRows: 500 };

export interface ImportResult {
  /** Records read after the header, good and bad. */
  records: number;
  added: number;
  /** Good lines already on their list (or repeating an earlier line). */
  existing: number;
  problems: ImportProblem[];
  /** Short transactions the entries were written in. */
  chunks: number;
}

export { STREAMS, REASONS, checkStream, checkAddress } from './checks.ts';

export const suppressionView = (row: SuppressionRow) => ({
  address: row.address,
  stream: row.stream,
  reason: row.reason,
  email_id: row.email_id,
  created_at: iso(row.created_at),
});

/** The two per-stream suppression lists of each workspace. */
export class SuppressionService {
  private readonly bulk: BulkSettings;

  constructor(private readonly deps: { db: Db; clock: Clock; bulk?: Partial<BulkSettings> }) {
    this.bulk = { ...BULK_DEFAULTS, ...deps.bulk };
  }

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

  /**
   * Adds many entries, `importChunkRows` per short transaction of their own, with a turn of
   * the event loop between two: other requests and writers (the group committer) go in
   * between, and on SQLite no commit waits behind the whole import. Returns how many were new.
   * A failure leaves the chunks before it written; adding the same entries again is harmless
   * (they count as existing).
   */
  async addMany(workspaceId: number, entries: { address: string; stream: Stream; reason: SuppressionReason }[]): Promise<number> {
    const now = this.deps.clock.now();
    const size = this.bulk.importChunkRows;
    let added = 0;
    for (let i = 0; i < entries.length; i += size) {
      if (i > 0) await nextTurn();
      added += await this.writeChunk(workspaceId, entries.slice(i, i + size), now);
    }
    return added;
  }

  private writeChunk(workspaceId: number, entries: { address: string; stream: Stream; reason: SuppressionReason }[], at: number): Promise<number> {
    const rows = entries.map((e) => ({
      workspace_id: workspaceId,
      stream: e.stream,
      address: e.address,
      reason: e.reason,
      email_id: null,
      domain: null,
      created_at: at,
    }));
    return this.deps.db.transaction((tx) => suppressionsRepo.addMany(tx, rows));
  }

  /**
   * A CSV import (see `readSuppressionCsv`): each chunk of about `importChunkRows` lines is read
   * and written (one short transaction) before the next is read, the event loop free between
   * chunks, so only one chunk is held at a time. `capped` (an API call; the CLI is the
   * operator's) refuses a file of more than `importMaxRows` lines after the header with 413
   * before anything is read or written.
   */
  async importCsv(workspaceId: number, text: string, opts: { defaultStream?: Stream; capped?: boolean } = {}): Promise<ImportResult> {
    if (opts.capped) {
      const lines = countLines(text) - 1;
      if (lines > this.bulk.importMaxRows) {
        throw new ServiceError(
          'PAYLOAD_TOO_LARGE',
          `An import takes at most ${this.bulk.importMaxRows} lines after the header (suppression.importMaxRows); this file holds ${lines}: split it and import the parts one after another`,
        );
      }
    }
    const now = this.deps.clock.now();
    const problems: ImportProblem[] = [];
    let records = 0;
    let good = 0;
    let added = 0;
    let chunks = 0;
    for await (const chunk of readSuppressionCsv(text, { defaultStream: opts.defaultStream, chunkRecords: this.bulk.importChunkRows })) {
      records += chunk.records;
      for (const p of chunk.problems) problems.push(p);
      if (chunk.entries.length === 0) continue;
      good += chunk.entries.length;
      added += await this.writeChunk(workspaceId, chunk.entries, now);
      chunks += 1;
    }
    // The parser reports a skipped line as it reads its slice, which may be a chunk early.
    problems.sort((a, b) => a.line - b.line);
    return { records, added, existing: good - added, problems, chunks };
  }

  /**
   * Pages of entries for an export, `exportPageRows` at a time by keyset (id) within each stream,
   * a turn of the event loop between two pages; nothing is read until the previous page was
   * taken, so a slow reader holds one page. A domain-scoped key's export holds its domain's
   * entries only. The stream is checked at once, before the first page is asked for.
   */
  exportPages(workspaceId: number, opts: { stream?: string; domain?: string | null } = {}): AsyncGenerator<SuppressionRow[]> {
    const streams = opts.stream === undefined ? STREAMS : [checkStream(opts.stream)];
    const size = this.bulk.exportPageRows;
    const db = this.deps.db;
    return (async function* () {
      for (const stream of streams) {
        let afterId: number | undefined;
        for (;;) {
          const page = await suppressionsRepo.list(db, { workspaceId, stream, domain: opts.domain ?? null, afterId, limit: size });
          if (page.length > 0) yield page;
          if (page.length < size) break;
          afterId = page.at(-1)!.id;
          await nextTurn();
        }
      }
    })();
  }

  /** Every entry (the CLI's list), oldest first. */
  async all(workspaceId: number, stream?: string, domain: string | null = null): Promise<SuppressionRow[]> {
    const out: SuppressionRow[] = [];
    for await (const page of this.exportPages(workspaceId, { stream, domain })) for (const row of page) out.push(row);
    return out.sort((a, b) => a.id - b.id);
  }

  async remove(workspaceId: number, stream: string, address: string): Promise<void> {
    if (!(await suppressionsRepo.remove(this.deps.db, workspaceId, checkStream(stream), address))) throw notFound();
  }
}
