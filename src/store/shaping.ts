import { isPg, type Conn, type Db } from './db.ts';

/** A destination group's state as its replies left it. */
export interface GroupState {
  name: string;
  suspendedUntil: number | null;
  reason: string | null;
  throttledUntil: number | null;
}

/** Requests for pacing slots of one group: `wanted` slots `interval` ms apart. */
export interface SlotRequest {
  group: string;
  wanted: number;
  interval: number;
}

const unfinishedDue = ['queued', 'deferred'];

/**
 * The shared part of traffic shaping (SPEC §11): which group each recipient domain belongs to,
 * what replies did to each group, and, on PostgreSQL, every process's pacing of a group's
 * per-minute limit.
 */
export const shapingRepo = {
  /** Records domains' groups (the MX rollup), replacing older answers. */
  async recordDomains(db: Conn, rows: { domain: string; group: string; expiresAt: number }[]): Promise<void> {
    // One order, so two processes' upserts cannot deadlock on the same domains.
    const sorted = [...rows].sort((a, b) => a.domain.localeCompare(b.domain));
    for (let i = 0; i < sorted.length; i += 300) {
      await db('delivery_domains')
        .insert(sorted.slice(i, i + 300).map((r) => ({ domain: r.domain, group_name: r.group, expires_at: r.expiresAt })))
        .onConflict('domain')
        .merge(['group_name', 'expires_at']);
    }
  },

  /** Groups that are suspended or throttled at `now`. */
  async activeStates(db: Conn, now: number): Promise<GroupState[]> {
    const rows: { name: string; suspended_until: number | null; reason: string | null; throttled_until: number | null }[] = await db('delivery_groups')
      .where('suspended_until', '>', now)
      .orWhere('throttled_until', '>', now)
      .select('name', 'suspended_until', 'reason', 'throttled_until');
    return rows.map((r) => ({
      name: r.name,
      suspendedUntil: r.suspended_until === null ? null : Number(r.suspended_until),
      reason: r.reason,
      throttledUntil: r.throttled_until === null ? null : Number(r.throttled_until),
    }));
  },

  /**
   * Suspends a lane (a group, or a group through one sending address) until `until` (a later
   * suspension wins); with `moveGroup`, the whole group is suspended and its due mail moves
   * there, so claims do not scan past it. Returns the rows moved. The recipient that drew the
   * reply is the caller's to defer.
   */
  async suspend(db: Db, lane: string, until: number, reason: string, now: number, moveGroup: string | null): Promise<number> {
    return db.transaction<number>(async (tx) => {
      await upsertGroup(tx, lane, now, { suspended_until: until, reason }, 'suspended_until', until);
      if (moveGroup === null) return 0;
      const group = moveGroup;
      const moved = await tx('recipients')
        .whereIn('status', unfinishedDue)
        .where('due_at', '<', until)
        .whereIn('domain', tx('delivery_domains').where('group_name', group).select('domain'))
        .update({ due_at: until, updated_at: now });
      return Number(moved);
    });
  },

  /**
   * Counts one message of a warming address to a group on a UTC day, unless `allowance` are
   * counted already: the count after it, or null when none was left. One statement, so
   * processes sharing a PostgreSQL database never send more than the allowance between them.
   */
  async takeWarmup(db: Conn, address: string, group: string, day: string, allowance: number): Promise<number | null> {
    const rows = (await db.raw(
      `insert into warmup_counts (address, group_name, day, count) values (?, ?, ?, 1)
       on conflict (address, group_name, day) do update set count = warmup_counts.count + 1 where warmup_counts.count < ?
       returning count`,
      [address, group, day, allowance],
    )) as { rows?: { count: number }[] } | { count: number }[];
    const list = Array.isArray(rows) ? rows : (rows.rows ?? []);
    return list.length > 0 ? Number(list[0]!.count) : null;
  },

  /** Halves a group's rate until `until` (a later throttle wins). */
  async throttle(db: Db, group: string, until: number, reason: string, now: number): Promise<void> {
    await upsertGroup(db, group, now, { throttled_until: until, reason }, 'throttled_until', until);
  },

  /**
   * Takes pacing slots for several groups in one statement, each group's row locked in name
   * order (two processes cannot deadlock); results in the order of `requests`. PostgreSQL: the
   * processes share each group's `next_slot`.
   */
  async takeSlots(db: Db, requests: SlotRequest[], now: number, horizon: number): Promise<{ start: number; granted: number }[]> {
    if (requests.length === 0) return [];
    if (!isPg(db)) throw new Error('shared pacing needs PostgreSQL; SQLite paces in memory');
    const names = [...new Set(requests.map((r) => r.group))].sort();
    await db.raw(`insert into delivery_groups (name, next_slot, updated_at) select unnest(?::text[]), 0, ? on conflict (name) do nothing`, [names, now] as never);
    const { rows } = (await db.raw(
      `with v as (
         select * from unnest(?::text[], ?::int[], ?::float8[]) as v(name, wanted, step)
       ), locked as (
         select g.name, g.next_slot from delivery_groups g where g.name in (select name from v) order by g.name for update
       ), calc as (
         select v.name, v.step, greatest(l.next_slot, ?) as start,
                least(v.wanted, greatest(0, floor((? - greatest(l.next_slot, ?)) / v.step)::bigint + 1)) as granted
         from v join locked l on l.name = v.name
       )
       update delivery_groups g set next_slot = calc.start + calc.granted * calc.step, updated_at = ?
       from calc where g.name = calc.name
       returning g.name, calc.start, calc.granted`,
      [requests.map((r) => r.group), requests.map((r) => r.wanted), requests.map((r) => r.interval), now, now + horizon, now, now] as never,
    )) as { rows: { name: string; start: number | string; granted: number | string }[] };
    const byName = new Map(rows.map((r) => [r.name, { start: Number(r.start), granted: Number(r.granted) }]));
    return requests.map((r) => byName.get(r.group) ?? { start: now, granted: 0 });
  },
};

async function upsertGroup(db: Conn, name: string, now: number, set: Record<string, unknown>, column: string, until: number): Promise<void> {
  await db('delivery_groups')
    .insert({ name, next_slot: 0, updated_at: now, ...set })
    .onConflict('name')
    .merge(
      Object.fromEntries([
        ...Object.keys(set).map((k) => [k, db.raw(`case when coalesce(delivery_groups.${column}, 0) <= ? then excluded.${k} else delivery_groups.${k} end`, [until])]),
        ['updated_at', now],
      ]),
    );
}
