import type { Conn, Db } from './db.ts';
import type { Bucket } from '../ratelimit/sliding.ts';
import type { RateCountStore } from '../ratelimit/counter.ts';
import type { RateGroupResult, RateHitGroup } from '../ratelimit/batched.ts';

const HOUR = 3600;

export const rateLimits = {
  /** The per-second counts of the requests of these keys, ascending by second. */
  async load(db: Conn, keyIds: number[], afterSecond: number): Promise<Map<number, Bucket[]>> {
    const out = new Map<number, Bucket[]>();
    for (let i = 0; i < keyIds.length; i += 500) {
      const rows: { key_id: number; second: number; count: number }[] = await db('rate_limit_buckets')
        .whereIn('key_id', keyIds.slice(i, i + 500))
        .andWhere('second', '>', afterSecond)
        .orderBy(['key_id', 'second'])
        .select('key_id', 'second', 'count');
      for (const r of rows) {
        const list = out.get(r.key_id) ?? [];
        if (list.length === 0) out.set(r.key_id, list);
        list.push({ second: Number(r.second), count: Number(r.count) });
      }
    }
    return out;
  },

  /** Adds counts in one statement per few hundred rows: an increment, so no row is read first. */
  async add(db: Conn, rows: { keyId: number; second: number; count: number }[]): Promise<void> {
    for (let i = 0; i < rows.length; i += 300) {
      await db('rate_limit_buckets')
        .insert(rows.slice(i, i + 300).map((r) => ({ key_id: r.keyId, second: r.second, count: r.count })))
        .onConflict(['key_id', 'second'])
        .merge({ count: db.raw('rate_limit_buckets.count + excluded.count') });
    }
  },

  /**
   * Decides and counts groups of requests in one statement (`mailsvc_rate_hits`, migration 010),
   * exactly across processes, PostgreSQL only. Each group is requests of one key in one second
   * under one set of limits; all groups share the windows' lengths. Returns, per group in the
   * order given, how many were allowed and the key's buckets as they were before the group.
   */
  async hitGroups(db: Db, groups: RateHitGroup[], windowSeconds: number[]): Promise<RateGroupResult[]> {
    if (groups.length === 0) return [];
    // Key and second order: the function locks keys in the order given.
    const order = groups.map((_, i) => i).sort((a, b) => groups[a].keyId - groups[b].keyId || groups[a].second - groups[b].second);
    const { rows } = await db.raw('select allowed, buckets from mailsvc_rate_hits(?::integer[], ?::bigint[], ?::integer[], ?::integer[], ?::integer[])', [
      order.map((i) => groups[i].keyId),
      order.map((i) => groups[i].second),
      order.map((i) => groups[i].count),
      windowSeconds,
      order.flatMap((i) => groups[i].limits),
    ]);
    const out: RateGroupResult[] = new Array(groups.length);
    order.forEach((i, n) => {
      const row = rows[n] as { allowed: number; buckets: [number, number][] };
      out[i] = { allowed: Number(row.allowed), before: row.buckets.map(([second, count]) => ({ second: Number(second), count: Number(count) })) };
    });
    return out;
  },

  /** Takes back counts added for a request that was refused after all (`BatchedRateLimit`). */
  async giveBack(db: Db, keyId: number, second: number, count: number): Promise<void> {
    await db('rate_limit_buckets').where({ key_id: keyId, second }).decrement('count', count);
  },

  /** Buckets older than the longest window count for nothing. */
  async prune(db: Db, nowMs: number): Promise<number> {
    return db('rate_limit_buckets')
      .where('second', '<=', Math.floor(nowMs / 1000) - HOUR)
      .delete();
  },
};

/** The rate counter's store over a database; inside a commit it uses that commit's transaction. */
export const rateCountStore = (db: Db): RateCountStore<Conn> => ({
  load: (conn, keyIds, afterSecond) => rateLimits.load(conn ?? db, keyIds, afterSecond),
  add: (conn, rows) => rateLimits.add(conn, rows),
});
