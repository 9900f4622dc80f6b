import { isPg, type Conn, type Db } from './db.ts';
import { decide, type RateDecision, type WindowLimit } from '../ratelimit/sliding.ts';

const HOUR = 3600;

export const rateLimits = {
  /**
   * Checks and counts one request for a key; run it inside a transaction. On PostgreSQL the
   * key's row is locked first so concurrent processes cannot both take the last slot.
   */
  async hit(tx: Conn, keyId: number, nowMs: number, windows: WindowLimit[]): Promise<RateDecision> {
    const nowSecond = Math.floor(nowMs / 1000);
    if (isPg(tx)) await tx('api_keys').where({ id: keyId }).forUpdate().select('id');
    const buckets = await tx('rate_limit_buckets')
      .where({ key_id: keyId })
      .andWhere('second', '>', nowSecond - HOUR)
      .orderBy('second')
      .select('second', 'count');
    const decision = decide(buckets, nowSecond, windows);
    if (decision.allowed) {
      await tx('rate_limit_buckets')
        .insert({ key_id: keyId, second: nowSecond, count: 1 })
        .onConflict(['key_id', 'second'])
        .merge({ count: tx.raw('rate_limit_buckets.count + 1') });
    }
    return decision;
  },

  /** Buckets older than the longest window count for nothing. */
  async prune(db: Db, nowMs: number): Promise<number> {
    return db('rate_limit_buckets').where('second', '<=', Math.floor(nowMs / 1000) - HOUR).delete();
  },
};
