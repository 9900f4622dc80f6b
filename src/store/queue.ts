import { inTransaction, isPg, type Conn, type Db, type Tx } from './db.ts';
import { deriveMessageStatuses, statusOnMove } from './messageStatus.ts';
import { CLAIMABLE, pickPg, pickSqlite, type ClaimRequest } from './claim-picks.ts';
import type { RecipientRow } from './messages.ts';
import { UNFINISHED_STATUSES } from '../messages/status.ts';

export type { ClaimRequest } from './claim-picks.ts';

/**
 * The delivery queue is the recipients table: a row is due when its status is `queued` or
 * `deferred` and `due_at` has passed. A claim sets it `sending`, with `lease_owner` and
 * `lease_until`, and moves `due_at` to the end of the lease: a row whose worker died becomes
 * due again when the lease runs out, found by the same (status, due_at) index as fresh work.
 */

/**
 * How the PostgreSQL statements below set the status of the messages whose recipients they
 * move, by the rule (`messages/status.ts`): a claimed recipient is `sending`, which the rule
 * ranks above every other status, so a claimed message becomes `sending`; a released scheduled
 * recipient is `queued`, ranked above `scheduled` and below every other unfinished status, and a
 * message with a scheduled recipient is never final, so exactly the messages still `scheduled`
 * become `queued`. Neither needs the messages' other recipients read again. Worked out on first
 * use (the rule is tried on every set of statuses: some milliseconds a CLI command need not pay).
 */
const claimMarks = once(() => statusOnMove('m', CLAIMABLE, 'sending'));
const releaseMarks = once(() => statusOnMove('m', ['scheduled'], 'queued'));

/** One attempt's outcome for `finishLeased`: the recipient's new state. */
export interface LeasedOutcome {
  id: number;
  status: 'delivered' | 'bounced' | 'failed' | 'deferred' | 'queued';
  /** The next attempt (deferred); null once final. */
  dueAt: number | null;
  attempts: number;
  lastResponse: string | null;
  lastMx: string | null;
  /** The sending address the attempt went out from (SPEC §12); null: none configured, or nothing sent. */
  sourceAddress: string | null;
  /** How the attempt's connection was protected (SPEC §13); null: no connection, the last one's stays. */
  tls?: RecipientTls | null;
}

export type RecipientTls = 'none' | 'opportunistic' | 'mta-sts';

export interface QueueStats {
  byStatus: Record<string, number>;
  byDestination: { domain: string; status: string; count: number }[];
  oldestDeferred: { id: number; email_id: number; address: string; due_at: number; first_due_at: number | null; attempts: number; last_response: string | null } | null;
}

export interface QueueListFilter {
  status?: string[];
  domain?: string;
  messageId?: number;
  limit: number;
}

const unfinished: readonly string[] = UNFINISHED_STATUSES;

export const queueRepo = {
  /**
   * Claims up to `limit` due rows, oldest due first. One statement picks and leases the rows:
   * on PostgreSQL the pick skips rows another worker has locked (FOR UPDATE SKIP LOCKED); on
   * SQLite the single writer makes the statement atomic. The messages of the claimed rows
   * become `sending` in the same transaction. On PostgreSQL the whole claim is ONE statement
   * (one round trip, no BEGIN/COMMIT): the messages' new status is known without reading their
   * recipients again (`claimMarks`); their rows are locked in id order first. A row a standing
   * hold covers is never claimed (`notHeldSql`): the sweep marks it `held` on the next pass.
   * On SQLite, given a transaction (a job of the group commit), the claim writes in it; given
   * the database, it opens one of its own.
   */
  async claim(db: Conn, req: ClaimRequest): Promise<RecipientRow[]> {
    const leaseUntil = req.now + req.leaseMs;
    if (isPg(db)) {
      const pick = pickPg(req);
      const { rows } = (await db.raw(
        `${pick.sql}, claimed as (
           update recipients r set status = 'sending', lease_owner = ?, lease_until = ?, due_at = ?, updated_at = ?
           from picked where r.id = picked.id returning r.*
         ), held as (
           select id from messages where id in (select message_id from claimed) order by id for update
         ), marked as (
           update messages m set status = ${claimMarks().status} from held where m.id = held.id and ${claimMarks().changes}
         )
         select * from claimed`,
        [...pick.bindings, req.owner, leaseUntil, leaseUntil, req.now] as never,
      )) as { rows: RecipientRow[] };
      return rows;
    }
    const claimIn = async (tx: Tx): Promise<RecipientRow[]> => {
      const pick = pickSqlite(req);
      const rows: RecipientRow[] = await tx('recipients')
        .whereRaw(`id in (${pick.sql})`, pick.bindings as never)
        .whereIn('status', CLAIMABLE)
        .update({ status: 'sending', lease_owner: req.owner, lease_until: leaseUntil, due_at: leaseUntil, updated_at: req.now })
        .returning('*');
      await deriveMessageStatuses(
        tx,
        rows.map((r) => r.message_id),
      );
      return rows;
    };
    return inTransaction(db) ? claimIn(db) : db.transaction(claimIn);
  },

  /**
   * Extends the leases of rows this owner is still working on; returns how many it renewed.
   * On PostgreSQL a row locked by another transaction is skipped rather than waited for: the
   * lock is this worker's own outcome being committed (the row is about to be finished), and
   * waiting for it while holding the locks of the rows renewed so far deadlocks with that
   * group commit, which locks the same rows in another order. A skipped row is renewed next time.
   */
  async renew(db: Conn, owner: string, ids: number[], now: number, leaseMs: number): Promise<number> {
    let held = 0;
    for (const chunk of chunks(ids, 500)) {
      const mine = db('recipients').whereIn('id', chunk).where({ lease_owner: owner, status: 'sending' });
      if (isPg(db)) mine.select('id').forUpdate().skipLocked();
      held += isPg(db)
        ? await db('recipients')
            .whereIn('id', mine)
            .update({ lease_until: now + leaseMs, due_at: now + leaseMs })
        : await mine.update({ lease_until: now + leaseMs, due_at: now + leaseMs });
    }
    return held;
  },

  /**
   * True while `owner` still holds the row's lease (delivery folds this check into
   * `finishLeased`). A write, so SQLite takes its write lock at once and PostgreSQL locks the
   * row until commit.
   */
  async holdsLease(tx: Tx, owner: string, id: number, now: number): Promise<boolean> {
    const n = await tx('recipients').where({ id, lease_owner: owner, status: 'sending' }).update({ updated_at: now });
    return n > 0;
  },

  /**
   * Many attempts' outcomes at once, each written only while `owner` still holds the row's
   * lease; returns the ids written (the others were given to another worker). One statement:
   * on SQLite the rows come as one JSON array; on PostgreSQL the held rows are locked in id
   * order (so two such batches cannot deadlock) and updated from the arrays, and a row whose
   * lease moved on while we waited for its lock fails the re-checked condition and is left alone;
   * the same statement then locks the held rows' messages, in id order, for the caller's status
   * derivation and events (`recordFinished` with `messagesLocked`). The lease is cleared;
   * `due_at` is the next attempt (deferred) or null (final). Message statuses are the caller's to
   * derive.
   */
  async finishLeased(tx: Tx, owner: string, rows: LeasedOutcome[], now: number): Promise<Set<number>> {
    const written = new Set<number>();
    if (rows.length === 0) return written;
    if (!isPg(tx)) {
      // The rows as one JSON array of arrays: a single statement whatever the batch size. The
      // unary `+` keeps the planner off the status index: each row is looked up by id.
      const values = JSON.stringify(rows.map((r) => [r.id, r.status, r.dueAt, r.attempts, r.lastResponse, r.lastMx, r.sourceAddress, r.tls ?? null]));
      const out: { id: number }[] = await tx.raw(
        `update recipients set status = v.status, due_at = v.due_at, attempts = v.attempts, last_response = v.last_response,
           last_mx = v.last_mx, source_address = coalesce(v.source_address, recipients.source_address), tls = coalesce(v.tls, recipients.tls),
           lease_owner = null, lease_until = null, updated_at = ?
         from (select json_extract(value, '$[0]') as id, json_extract(value, '$[1]') as status, json_extract(value, '$[2]') as due_at,
                      json_extract(value, '$[3]') as attempts, json_extract(value, '$[4]') as last_response, json_extract(value, '$[5]') as last_mx,
                      json_extract(value, '$[6]') as source_address, json_extract(value, '$[7]') as tls
               from json_each(?)) as v
         where recipients.id = v.id and +recipients.lease_owner = ? and +recipients.status = 'sending'
         returning recipients.id`,
        [now, values, owner],
      );
      for (const r of out) written.add(Number(r.id));
      return written;
    }
    // A SELECT clause of a WITH runs only when read: the final filter reads `locked` once, before
    // the update is read, so the messages are locked right after their recipients.
    const { rows: out } = (await tx.raw(
      `with held as (
         select id, message_id from recipients where id = any(?::int[]) and lease_owner = ? and status = 'sending' order by id for update
       ), locked as (
         select id from messages where id in (select message_id from held) order by id for update
       ), written as (
         update recipients r set status = v.status, due_at = v.due_at, attempts = v.attempts, last_response = v.last_response,
           last_mx = v.last_mx, source_address = coalesce(v.source_address, r.source_address), tls = coalesce(v.tls, r.tls),
           lease_owner = null, lease_until = null, updated_at = ?
         from held join unnest(?::int[], ?::text[], ?::bigint[], ?::int[], ?::text[], ?::text[], ?::text[], ?::text[])
           as v(id, status, due_at, attempts, last_response, last_mx, source_address, tls) on v.id = held.id
         where r.id = held.id
         returning r.id
       )
       select id from written where (select count(*) from locked) >= 0`,
      // Arrays bind as PostgreSQL arrays (`$n::int[]`); knex's types know only arrays without nulls.
      [
        rows.map((r) => r.id),
        owner,
        now,
        rows.map((r) => r.id),
        rows.map((r) => r.status),
        rows.map((r) => r.dueAt),
        rows.map((r) => r.attempts),
        rows.map((r) => r.lastResponse),
        rows.map((r) => r.lastMx),
        rows.map((r) => r.sourceAddress),
        rows.map((r) => r.tls ?? null),
      ] as unknown as string[],
    )) as { rows: { id: number }[] };
    for (const r of out) written.add(Number(r.id));
    return written;
  },

  /**
   * Gives rows back untouched (shutdown): due now, in the status they had before the claim
   * (`deferred` once tried, else `queued`), for this or another worker to take.
   */
  async release(db: Db, owner: string, ids: number[], now: number): Promise<number> {
    if (ids.length === 0) return 0;
    return db.transaction(async (tx) => {
      let released = 0;
      const messageIds: number[] = [];
      for (const chunk of chunks(ids, 500)) {
        const rows: { message_id: number }[] = await tx('recipients').whereIn('id', chunk).distinct('message_id');
        messageIds.push(...rows.map((r) => r.message_id));
        const base = () => tx('recipients').whereIn('id', chunk).where({ lease_owner: owner, status: 'sending' });
        const clear = { due_at: now, lease_owner: null, lease_until: null, updated_at: now };
        released += await base()
          .where('attempts', '>', 0)
          .update({ ...clear, status: 'deferred' });
        released += await base()
          .where('attempts', 0)
          .update({ ...clear, status: 'queued' });
      }
      await deriveMessageStatuses(tx, messageIds);
      return released;
    });
  },

  /**
   * Scheduled rows whose time has come become `queued`; returns how many. Every delivery worker
   * runs this (no leader to lose), so it is safe side by side: each chunk is its own transaction
   * (one statement on PostgreSQL), and on PostgreSQL a chunk skips rows another worker is
   * releasing (SKIP LOCKED) instead of queueing behind it, so workers split a burst and claim
   * each released chunk at once.
   */
  async releaseScheduled(db: Db, now: number, chunk = 100, maxChunks = Infinity): Promise<number> {
    let released = 0;
    for (let chunks = 1; ; chunks++) {
      const n = isPg(db)
        ? await releaseChunkPg(db, now, chunk)
        : await db.transaction(async (tx) => {
            const due: { id: number; message_id: number }[] = await tx('recipients')
              .where({ status: 'scheduled' })
              .where('due_at', '<=', now)
              .orderBy('due_at')
              .limit(chunk)
              .select('id', 'message_id');
            if (due.length === 0) return 0;
            const changed = await tx('recipients')
              .whereIn(
                'id',
                due.map((r) => r.id),
              )
              .where({ status: 'scheduled' })
              .update({ status: 'queued', updated_at: now });
            await deriveMessageStatuses(
              tx,
              due.map((r) => r.message_id),
            );
            return changed;
          });
      released += n;
      if (n < chunk || chunks >= maxChunks) return released;
    }
  },

  async stats(db: Conn): Promise<QueueStats> {
    const byStatus: Record<string, number> = {};
    const counts: { status: string; count: number | string }[] = await db('recipients').groupBy('status').select('status').count({ count: '*' });
    for (const c of counts) byStatus[c.status] = Number(c.count);
    const destinations = (await db('recipients')
      .whereIn('status', unfinished)
      .groupBy('domain', 'status')
      .select('domain', 'status')
      .count({ count: '*' })
      .orderBy([{ column: 'count', order: 'desc' }, { column: 'domain' }])
      .limit(50)) as unknown as { domain: string; status: string; count: number | string }[];
    const oldest = await db('recipients')
      .where({ status: 'deferred' })
      .orderBy('first_due_at')
      .first('id', 'message_id', 'address', 'due_at', 'first_due_at', 'attempts', 'last_response');
    return {
      byStatus,
      byDestination: destinations.map((d) => ({ domain: d.domain, status: d.status, count: Number(d.count) })),
      oldestDeferred: oldest
        ? {
            id: oldest.id,
            email_id: oldest.message_id,
            address: oldest.address,
            due_at: Number(oldest.due_at),
            first_due_at: oldest.first_due_at === null ? null : Number(oldest.first_due_at),
            attempts: oldest.attempts,
            last_response: oldest.last_response,
          }
        : null,
    };
  },

  /** Unfinished rows by status, for the queue gauge (served by the status index). */
  async unfinishedCounts(db: Conn): Promise<Record<string, number>> {
    const out: Record<string, number> = Object.fromEntries(unfinished.map((s) => [s, 0]));
    const counts: { status: string; count: number | string }[] = await db('recipients')
      .whereIn('status', unfinished)
      .groupBy('status')
      .select('status')
      .count({ count: '*' });
    for (const c of counts) out[c.status] = Number(c.count);
    return out;
  },

  /** Unfinished rows, those due soonest first. */
  async list(db: Conn, f: QueueListFilter): Promise<RecipientRow[]> {
    const q = db('recipients')
      .whereIn('status', f.status?.length ? f.status : unfinished)
      .orderBy([{ column: 'due_at' }, { column: 'id' }])
      .limit(f.limit);
    if (f.domain) q.where({ domain: f.domain.toLowerCase() });
    if (f.messageId !== undefined) q.where({ message_id: f.messageId });
    return q;
  },

  /** Makes deferred rows due now, by recipient id, message id or destination domain. */
  async retryNow(db: Conn, target: { recipientIds?: number[]; messageIds?: number[]; domain?: string }, now: number): Promise<number> {
    const q = db('recipients').where({ status: 'deferred' });
    if (target.recipientIds) q.whereIn('id', target.recipientIds);
    if (target.messageIds) q.whereIn('message_id', target.messageIds);
    if (target.domain) q.where({ domain: target.domain.toLowerCase() });
    return q.update({ due_at: now, updated_at: now });
  },
};

/**
 * One chunk of `releaseScheduled` on PostgreSQL as one statement; the messages' new status is
 * known without reading their recipients again (`releaseMarks`).
 */
async function releaseChunkPg(db: Db, now: number, chunk: number): Promise<number> {
  const { rows } = (await db.raw(
    `with due as (
       select id from recipients where status = 'scheduled' and due_at <= ? order by due_at limit ? for update skip locked
     ), released as (
       update recipients r set status = 'queued', updated_at = ? from due where r.id = due.id returning r.message_id
     ), held as (
       select id from messages where id in (select message_id from released) order by id for update
     ), marked as (
       update messages m set status = ${releaseMarks().status} from held where m.id = held.id and ${releaseMarks().changes}
     )
     select count(*)::int as n from released`,
    [now, chunk, now],
  )) as { rows: { n: number }[] };
  return rows[0]!.n;
}

function once<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
