import type { Conn, Db } from './db.ts';
import { decide, type Bucket, type RateDecision, type WindowLimit } from '../ratelimit/sliding.ts';
import type { RateCountStore } from '../ratelimit/counter.ts';

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
   * Decides and counts one request against the stored counts, exactly, whatever other processes
   * do: PostgreSQL only, one statement in a transaction of its own (`mailsvc_rate_hit`,
   * migration 009), which locks the key only while it runs inside the server.
   */
  async hitExactly(db: Db, keyId: number, nowMs: number, windows: WindowLimit[]): Promise<RateDecision> {
    const nowSecond = Math.floor(nowMs / 1000);
    const { rows } = await db.raw('select allowed, buckets from mailsvc_rate_hit(?, ?, ?::integer[], ?::integer[])', [
      keyId,
      nowSecond,
      windows.map((w) => w.seconds),
      windows.map((w) => w.limit),
    ]);
    const before: Bucket[] = (rows[0].buckets as [number, number][]).map(([second, count]) => ({ second: Number(second), count: Number(count) }));
    const decision = decide(before, nowSecond, windows);
    // The function applied the same rule; its verdict is the one that was counted.
    return decision.allowed === rows[0].allowed ? decision : { ...decision, allowed: rows[0].allowed };
  },

  /** Buckets older than the longest window count for nothing. */
  async prune(db: Db, nowMs: number): Promise<number> {
    return db('rate_limit_buckets').where('second', '<=', Math.floor(nowMs / 1000) - HOUR).delete();
  },
};

/** The rate counter's store over a database; inside a commit it uses that commit's transaction. */
export const rateCountStore = (db: Db): RateCountStore<Conn> => ({
  load: (conn, keyIds, afterSecond) => rateLimits.load(conn ?? db, keyIds, afterSecond),
  add: (conn, rows) => rateLimits.add(conn, rows),
});
