import type { Knex } from 'knex';
import { invalid } from '../core/errors.ts';
import { isPg, type Conn, type Db, type Tx } from './db.ts';
import { deriveMessageStatuses } from './messageStatus.ts';
import { usageRepo } from './usage.ts';
import { UNFINISHED_STATUSES } from '../messages/status.ts';

/**
 * Queue control (SPEC §11): holding, releasing and canceling recipients by a filter, and the
 * standing holds (`queue_holds`, migration 015) that keep holding mail accepted later.
 *
 * Every move is one statement over the rows it changes followed by the derivation of their
 * messages' statuses, in one transaction. On PostgreSQL the statement first locks the rows it
 * picks in id order (so two moves cannot deadlock on each other) and re-checks each row's
 * status once it has the lock: a row a claim took meanwhile is `sending` by then and is left
 * alone. `sending` rows are never touched: a delivery in flight finishes under its lease.
 */

/** Which recipients a hold, release or cancel is about: the conjunction of the fields given. */
export interface QueueFilter {
  /** Only this workspace's mail; none: every workspace (the CLI is server-wide). */
  workspaceId?: number;
  /** The recipient's domain. */
  domain?: string;
  /** The destination group of the recipient's domain (`delivery_domains.group_name`). */
  group?: string;
  /** The message's stream. */
  stream?: string;
  /** The message's sending domain (`messages.domain`): what a domain-scoped key may act on. */
  sendingDomain?: string;
  messageId?: number;
}

/** Per destination group: what waits, and the group's suspension while it lasts. */
export interface GroupCounts {
  group: string;
  queued: number;
  deferred: number;
  held: number;
  /** A standing hold names the whole group within the scope asked about. */
  onHold: boolean;
  holdReason: string | null;
  suspendedUntil: number | null;
  reason: string | null;
}

/** Recipients of a domain no delivery has resolved yet are counted under this group. */
export const UNRESOLVED_GROUP = 'unresolved';

const FIELDS = ['workspaceId', 'domain', 'group', 'stream', 'sendingDomain', 'messageId'] as const;
/** The `queue_holds` column of each filter field. */
const COLUMNS = {
  workspaceId: 'workspace_id',
  domain: 'domain',
  group: 'group_name',
  stream: 'stream',
  sendingDomain: 'sending_domain',
  messageId: 'message_id',
} as const satisfies Record<(typeof FIELDS)[number], string>;

const quoted = (statuses: readonly string[]) => statuses.map((s) => `'${s}'`).join(', ');
const WAITING = quoted(['queued', 'deferred']);
const CANCELABLE = quoted(['scheduled', 'queued', 'deferred', 'held']);
const UNFINISHED = quoted(UNFINISHED_STATUSES);

/** Rows moved per statement by the sweep; each chunk is its own transaction. */
const SWEEP_CHUNK = 1000;

/**
 * Whether standing hold `h` covers the recipient row `r`, as SQL over the two aliases (valid on
 * SQLite and PostgreSQL): each of the hold's non-null fields equals the row's.
 */
function holdCovers(h: string, r: string): string {
  return `(${h}.workspace_id is null or ${h}.workspace_id = ${r}.workspace_id)
    and (${h}.domain is null or ${h}.domain = ${r}.domain)
    and (${h}.message_id is null or ${h}.message_id = ${r}.message_id)
    and (${h}.group_name is null or exists (select 1 from delivery_domains qhd where qhd.domain = ${r}.domain and qhd.group_name = ${h}.group_name))
    and ((${h}.stream is null and ${h}.sending_domain is null) or exists (select 1 from messages qhm where qhm.id = ${r}.message_id
      and (${h}.stream is null or qhm.stream = ${h}.stream) and (${h}.sending_domain is null or qhm.domain = ${h}.sending_domain)))`;
}

/**
 * A condition on the recipient row `alias`: no standing hold covers it. The claim embeds it, so
 * mail a hold covers is never claimed in the moments before the sweep marks it `held`. With no
 * holds stored it is an anti-join against an empty table.
 */
export function notHeldSql(alias: string): string {
  return `not exists (select 1 from queue_holds qh where ${holdCovers('qh', alias)})`;
}

/** The filter as SQL over the recipient row `r`, with its bindings. */
function filterSql(f: QueueFilter, r: string): { sql: string; bindings: Knex.RawBinding[] } {
  const parts: string[] = [];
  const bindings: Knex.RawBinding[] = [];
  const add = (sql: string, ...values: Knex.RawBinding[]) => {
    parts.push(sql);
    bindings.push(...values);
  };
  if (f.workspaceId !== undefined) add(`${r}.workspace_id = ?`, f.workspaceId);
  if (f.domain !== undefined) add(`${r}.domain = ?`, f.domain);
  if (f.messageId !== undefined) add(`${r}.message_id = ?`, f.messageId);
  if (f.group !== undefined) add(`exists (select 1 from delivery_domains qfd where qfd.domain = ${r}.domain and qfd.group_name = ?)`, f.group);
  if (f.stream !== undefined || f.sendingDomain !== undefined) {
    const on = [...(f.stream !== undefined ? ['qfm.stream = ?'] : []), ...(f.sendingDomain !== undefined ? ['qfm.domain = ?'] : [])];
    add(
      `exists (select 1 from messages qfm where qfm.id = ${r}.message_id and ${on.join(' and ')})`,
      ...[f.stream, f.sendingDomain].filter((v): v is string => v !== undefined),
    );
  }
  return { sql: parts.join(' and '), bindings };
}

/** The filter with its names in canonical form; refuses one that names nothing. */
function checked(f: QueueFilter): QueueFilter {
  const out: QueueFilter = {
    ...(f.workspaceId !== undefined ? { workspaceId: f.workspaceId } : {}),
    ...(f.domain !== undefined ? { domain: f.domain.toLowerCase() } : {}),
    ...(f.group !== undefined ? { group: f.group.toLowerCase() } : {}),
    ...(f.stream !== undefined ? { stream: f.stream } : {}),
    ...(f.sendingDomain !== undefined ? { sendingDomain: f.sendingDomain.toLowerCase() } : {}),
    ...(f.messageId !== undefined ? { messageId: f.messageId } : {}),
  };
  if (Object.keys(out).length === 0) throw invalid('Name at least one of domain, group, workspace, stream, email: an empty filter would take the whole queue');
  return out;
}

const filterKey = (f: QueueFilter) => JSON.stringify(FIELDS.map((k) => f[k] ?? null));

type Returned = { message_id: number | string }[];
const rowsOf = (result: unknown): Returned => (Array.isArray(result) ? (result as Returned) : (result as { rows: Returned }).rows);

/**
 * Moves the rows in one of `from` statuses that match `where`, with the `set` assignments;
 * returns the message id of each row moved. `skipLocked`: rows another transaction has locked
 * are left for it (the sweep, which every worker runs).
 */
async function move(
  tx: Tx,
  spec: { from: string; where: { sql: string; bindings: Knex.RawBinding[] }; set: string; setBindings: Knex.RawBinding[]; limit?: number; skipLocked?: boolean },
): Promise<number[]> {
  const limit = spec.limit === undefined ? '' : ` limit ${spec.limit}`;
  const pick = `select id from recipients where status in (${spec.from}) and ${spec.where.sql}`;
  const result: unknown = isPg(tx)
    ? await tx.raw(
        `with picked as (${pick} order by id${limit} for update${spec.skipLocked ? ' skip locked' : ''})
         update recipients set ${spec.set} from picked where recipients.id = picked.id returning recipients.message_id`,
        [...spec.where.bindings, ...spec.setBindings],
      )
    : await tx.raw(`update recipients set ${spec.set} where id in (${pick} order by id${limit}) returning message_id`, [...spec.setBindings, ...spec.where.bindings]);
  const ids = rowsOf(result).map((r) => Number(r.message_id));
  await deriveMessageStatuses(tx, ids);
  return ids;
}

/** A standing hold that names a group, with its other fields (null: any). */
export interface GroupHold {
  workspaceId: number | null;
  domain: string | null;
  group: string;
  stream: string | null;
  sendingDomain: string | null;
  messageId: number | null;
}

export const queueControlRepo = {
  /**
   * Stores the standing hold (once per filter; `reason` is kept from the first) and holds the
   * matching `queued` and `deferred` rows; returns how many it held. Scheduled rows keep their
   * time: the scheduler releases them as usual and the claim predicate and the sweep hold them
   * then.
   */
  async hold(db: Db, filter: QueueFilter, now: number, reason: string | null = null): Promise<number> {
    const f = checked(filter);
    return db.transaction(async (tx) => {
      const columns = Object.fromEntries(FIELDS.map((k) => [COLUMNS[k], f[k] ?? null]));
      await tx('queue_holds')
        .insert({ ...columns, filter_key: filterKey(f), reason, created_at: now })
        .onConflict('filter_key')
        .ignore();
      const moved = await move(tx, { from: WAITING, where: filterSql(f, 'recipients'), set: `status = 'held', held_at = ?, updated_at = ?`, setBindings: [now, now] });
      return moved.length;
    });
  },

  /**
   * Lifts the standing holds the filter covers (each field the filter names equals the hold's:
   * a workspace's release never lifts a server-wide hold), then gives back the matching held
   * rows no remaining hold covers: `deferred` when tried before, else `queued`, due now, their
   * `first_due_at` moved forward by the time they were held. Returns how many it gave back.
   */
  async release(db: Db, filter: QueueFilter, now: number): Promise<number> {
    const f = checked(filter);
    return db.transaction(async (tx) => {
      const covered = tx('queue_holds');
      for (const k of FIELDS) if (f[k] !== undefined) covered.where(COLUMNS[k], f[k]);
      await covered.delete();
      const where = filterSql(f, 'recipients');
      const moved = await move(tx, {
        from: `'held'`,
        where: { sql: `${where.sql} and ${notHeldSql('recipients')}`, bindings: where.bindings },
        set: `status = case when attempts > 0 then 'deferred' else 'queued' end, due_at = ?,
          first_due_at = first_due_at + (? - coalesce(held_at, ?)), held_at = null, updated_at = ?`,
        setBindings: [now, now, now, now],
      });
      return moved.length;
    });
  },

  /**
   * Cancels the matching unfinished rows that are not being sent (scheduled, queued, deferred,
   * held); returns how many. Canceled mail is not billed: the workspace's usage of the day each
   * message was accepted goes down by its canceled recipients. Nothing is suppressed and no
   * event is recorded. Standing holds naming a message that has nothing left to send go too.
   */
  async cancel(db: Db, filter: QueueFilter, now: number): Promise<number> {
    const f = checked(filter);
    return db.transaction(async (tx) => {
      const moved = await move(tx, {
        from: CANCELABLE,
        where: filterSql(f, 'recipients'),
        set: `status = 'canceled', due_at = null, held_at = null, updated_at = ?`,
        setBindings: [now],
      });
      const perMessage = new Map<number, number>();
      for (const id of moved) perMessage.set(id, (perMessage.get(id) ?? 0) + 1);
      await queueControlRepo.unbill(tx, perMessage);
      const messages = [...new Set(moved)];
      for (let i = 0; i < messages.length; i += 500) {
        await tx('queue_holds')
          .whereIn('message_id', messages.slice(i, i + 500))
          .whereNotExists((q) =>
            q.select(tx.raw('1')).from('recipients').whereRaw(`recipients.message_id = queue_holds.message_id and recipients.status in (${UNFINISHED})`),
          )
          .delete();
      }
      return moved.length;
    });
  },

  /**
   * Takes back the usage of canceled recipients, given how many of each message's were
   * canceled: per workspace, UTC day of acceptance and stream, as `AcceptService` counted them.
   */
  async unbill(tx: Tx, perMessage: Map<number, number>): Promise<void> {
    const counters = new Map<string, { workspaceId: number; day: string; stream: string; count: number }>();
    const ids = [...perMessage.keys()];
    for (let i = 0; i < ids.length; i += 500) {
      const rows: { id: number; workspace_id: number; stream: string; created_at: number | string }[] = await tx('messages')
        .whereIn('id', ids.slice(i, i + 500))
        .select('id', 'workspace_id', 'stream', 'created_at');
      for (const m of rows) {
        const day = new Date(Number(m.created_at)).toISOString().slice(0, 10);
        const key = `${m.workspace_id}/${day}/${m.stream}`;
        const c = counters.get(key) ?? { workspaceId: m.workspace_id, day, stream: m.stream, count: 0 };
        counters.set(key, c);
        c.count += perMessage.get(m.id)!;
      }
    }
    // In the order accepting commits add to them, so neither waits on the other in a cycle.
    const ordered = [...counters.values()].sort((a, b) => a.workspaceId - b.workspaceId || a.stream.localeCompare(b.stream) || a.day.localeCompare(b.day));
    for (const c of ordered) await usageRepo.subtraction(tx, c.workspaceId, c.day, c.stream, c.count);
  },

  /** Whether any standing hold is stored: the sweep's cheap first question. */
  /**
   * The standing holds that name a destination group: the claim cannot see them cover a domain
   * no delivery has resolved yet, so the delivery worker checks a recipient against them once
   * its group is known.
   */
  async groupHolds(db: Conn): Promise<GroupHold[]> {
    const rows: {
      workspace_id: number | null;
      domain: string | null;
      group_name: string;
      stream: string | null;
      sending_domain: string | null;
      message_id: number | null;
    }[] = await db('queue_holds').whereNotNull('group_name').select('workspace_id', 'domain', 'group_name', 'stream', 'sending_domain', 'message_id');
    return rows.map((r) => ({
      workspaceId: r.workspace_id,
      domain: r.domain,
      group: r.group_name,
      stream: r.stream,
      sendingDomain: r.sending_domain,
      messageId: r.message_id,
    }));
  },

  async hasHolds(db: Conn): Promise<boolean> {
    return (await db('queue_holds').first('id')) !== undefined;
  },

  /**
   * Holds the due `queued` and `deferred` rows a standing hold covers (mail accepted, released
   * by the scheduler or deferred since the hold was made); returns how many. Only due rows: the
   * claim takes nothing else, and a deferred row waits for its retry as it would have anyway
   * (it is held from when it falls due). Every delivery worker runs it about once a second;
   * with no hold stored it costs one read. On PostgreSQL rows another worker's sweep (or a
   * claim) has locked are skipped.
   */
  async sweepHolds(db: Db, now: number): Promise<number> {
    if (!(await queueControlRepo.hasHolds(db))) return 0;
    let held = 0;
    for (;;) {
      const n = await db.transaction(
        async (tx) =>
          (
            await move(tx, {
              from: WAITING,
              where: { sql: `recipients.due_at <= ? and exists (select 1 from queue_holds qh where ${holdCovers('qh', 'recipients')})`, bindings: [now] },
              set: `status = 'held', held_at = ?, updated_at = ?`,
              setBindings: [now, now],
              limit: SWEEP_CHUNK,
              skipLocked: true,
            })
          ).length,
      );
      held += n;
      if (n < SWEEP_CHUNK) return held;
    }
  },

  /**
   * Waiting recipients per destination group (`unresolved` for domains no delivery has looked
   * up yet), the groups standing holds name, and each group's suspension while it lasts; the
   * largest groups first, at most `limit`. `workspaceId`/`sendingDomain` scope the counts and
   * the holds to what an API key may see.
   */
  async groupStats(db: Conn, opts: { workspaceId?: number; sendingDomain?: string; now: number; limit?: number }): Promise<GroupCounts[]> {
    const q = db('recipients as r')
      .leftJoin('delivery_domains as d', 'd.domain', 'r.domain')
      .whereIn('r.status', ['queued', 'deferred', 'held'])
      .groupByRaw('1, 2')
      .select(db.raw(`coalesce(d.group_name, '${UNRESOLVED_GROUP}') as grp`), 'r.status as status')
      .count({ count: '*' });
    if (opts.workspaceId !== undefined) q.where('r.workspace_id', opts.workspaceId);
    if (opts.sendingDomain !== undefined) q.join('messages as m', 'm.id', 'r.message_id').where('m.domain', opts.sendingDomain);
    const counts = (await q) as unknown as { grp: string; status: 'queued' | 'deferred' | 'held'; count: number | string }[];

    // Holds of the whole group within the scope: the scope's own and server-wide ones.
    const holds = db('queue_holds')
      .whereNotNull('group_name')
      .whereNull('domain')
      .whereNull('stream')
      .whereNull('message_id')
      .select('group_name', 'reason')
      .orderBy('id');
    if (opts.workspaceId === undefined) holds.whereNull('workspace_id');
    else holds.where((w) => w.whereNull('workspace_id').orWhere('workspace_id', opts.workspaceId!));
    if (opts.sendingDomain === undefined) holds.whereNull('sending_domain');
    else holds.where((w) => w.whereNull('sending_domain').orWhere('sending_domain', opts.sendingDomain!));

    const groups = new Map<string, GroupCounts>();
    const group = (name: string) => {
      const g = groups.get(name) ?? { group: name, queued: 0, deferred: 0, held: 0, onHold: false, holdReason: null, suspendedUntil: null, reason: null };
      groups.set(name, g);
      return g;
    };
    for (const c of counts) group(c.grp)[c.status] = Number(c.count);
    for (const h of (await holds) as { group_name: string; reason: string | null }[]) {
      const g = group(h.group_name);
      g.onHold = true;
      g.holdReason ??= h.reason;
    }
    const size = (g: GroupCounts) => g.queued + g.deferred + g.held;
    const listed = [...groups.values()]
      .sort((a, b) => Number(b.onHold) - Number(a.onHold) || size(b) - size(a) || a.group.localeCompare(b.group))
      .slice(0, opts.limit ?? 100);
    const names = listed.map((g) => g.group);
    if (names.length > 0) {
      const suspended: { name: string; suspended_until: number | string; reason: string | null }[] = await db('delivery_groups')
        .whereIn('name', names)
        .where('suspended_until', '>', opts.now)
        .select('name', 'suspended_until', 'reason');
      for (const s of suspended) Object.assign(groups.get(s.name)!, { suspendedUntil: Number(s.suspended_until), reason: s.reason });
    }
    return listed;
  },
};
