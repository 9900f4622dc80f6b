import { describe, expect, it } from 'vitest';
import { BatchedRateLimit, type RateHitGroup } from '../../src/ratelimit/batched.ts';
import type { WindowLimit } from '../../src/ratelimit/sliding.ts';

const windows: WindowLimit[] = [{ name: 'minute', seconds: 60, limit: 5 }];

describe('rate-limit hits sent in batches', () => {
  it('sends the hits of one turn of the event loop in one call and answers each in arrival order', async () => {
    const calls: RateHitGroup[][] = [];
    const limiter = new BatchedRateLimit(async (groups) => {
      calls.push(groups);
      return groups.map((g) => ({ allowed: Math.min(g.count, 5), before: [] }));
    });
    const decisions = await Promise.all(Array.from({ length: 8 }, () => limiter.hit(7, 1_700_000_000_000, windows)));
    expect(calls).toStrictEqual([[{ keyId: 7, second: 1_700_000_000, count: 8, limits: [5] }]]);
    expect(decisions.map((d) => d.allowed)).toStrictEqual([true, true, true, true, true, false, false, false]);
  });
});
