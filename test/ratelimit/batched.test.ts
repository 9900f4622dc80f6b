import { describe, expect, it } from 'vitest';
import { BatchedRateLimit, type RateHitGroup } from '../../src/ratelimit/batched.ts';
import type { WindowLimit } from '../../src/ratelimit/sliding.ts';

const windows: WindowLimit[] = [{ name: 'minute', seconds: 60, limit: 5 }];

describe('rate-limit hits sent in batches', () => {
  it('sends the hits of one turn of the event loop in one call and answers each in arrival order', async () => {
    const calls: RateHitGroup[][] = [];
    const limiter = new BatchedRateLimit(
      async (groups) => {
        calls.push(groups);
        return groups.map((g) => ({ allowed: Math.min(g.count, 5), before: [] }));
      },
      async () => undefined,
    );
    const decisions = await Promise.all(Array.from({ length: 8 }, () => limiter.hit(7, 1_700_000_000_000, windows)));
    expect(calls).toStrictEqual([[{ keyId: 7, second: 1_700_000_000, count: 8, limits: [5] }]]);
    expect(decisions.map((d) => d.allowed)).toStrictEqual([true, true, true, true, true, false, false, false]);
  });

  it('allows a weighted request only whole, and gives back what the store counted of one that did not fit', async () => {
    const stored = new Map<number, number>();
    const givenBack: [number, number, number][] = [];
    const limiter = new BatchedRateLimit(
      async (groups) =>
        groups.map((g) => {
          const used = stored.get(g.keyId) ?? 0;
          const allowed = Math.min(g.count, Math.max(0, 5 - used));
          stored.set(g.keyId, used + allowed);
          return { allowed, before: used > 0 ? [{ second: g.second, count: used }] : [] };
        }),
      async (keyId, second, count) => {
        givenBack.push([keyId, second, count]);
        stored.set(keyId, stored.get(keyId)! - count);
      },
    );
    const first = await limiter.hit(7, 1_700_000_000_000, windows, 3);
    expect(first).toMatchObject({ allowed: true, remaining: 2 });
    const second = await limiter.hit(7, 1_700_000_000_000, windows, 3);
    expect(second.allowed).toBe(false);
    expect(second.retryAfter).toBeGreaterThan(0);
    expect(givenBack).toStrictEqual([[7, 1_700_000_000, 2]]);
    expect(stored.get(7)).toBe(3);
    // The two requests that still fit are allowed.
    expect((await limiter.hit(7, 1_700_000_000_000, windows, 2)).allowed).toBe(true);
  });
});
