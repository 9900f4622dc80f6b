import { describe, expect, it } from 'vitest';
import { RateCounter } from '../../src/ratelimit/counter.ts';
import type { WindowLimit } from '../../src/ratelimit/sliding.ts';
import { GroupCommitter } from '../../src/store/groupCommit.ts';
import { rateCountStore } from '../../src/store/rateLimits.ts';
import { migratedStore } from '../helpers/db.ts';

const windows: WindowLimit[] = [{ name: 'minute', seconds: 60, limit: 1000 }];
const NOW = 1_700_000_000_000;

async function counting(flushAfterMs: number) {
  const { db } = await migratedStore('sqlite');
  const committer = new GroupCommitter(db);
  let monotonic = 0;
  const flushes: Promise<unknown>[] = [];
  const counter = new RateCounter({
    store: rateCountStore(db),
    flush: () => {
      const done = committer.run(async () => undefined);
      flushes.push(done);
      return done;
    },
    flushAfterMs,
    refreshAfterMs: 60_000,
    monotonic: () => monotonic,
  });
  committer.setCommitHook({ due: () => counter.due(), run: (tx) => counter.beforeCommit(tx, NOW) });
  const stored = async () => (await db('rate_limit_buckets').select('count')).reduce((sum, r) => sum + Number(r.count), 0);
  const otherWork = () => committer.run(async (tx) => tx.raw('select 1'));
  return { counter, committer, stored, otherWork, flushes, advance: (ms: number) => (monotonic += ms) };
}

describe('rate counts kept in memory', () => {
  it('ride the first commit a flush interval after the last write, not every commit', async () => {
    // Long enough that the real flush timer never fires during the test.
    const { counter, stored, otherWork, advance } = await counting(60_000);
    await counter.hit(1, NOW, windows);
    await otherWork();
    expect(await stored()).toBe(1);
    await counter.hit(1, NOW, windows);
    await counter.hit(1, NOW, windows);
    await otherWork();
    expect(await stored()).toBe(1);
    advance(59_999);
    await otherWork();
    expect(await stored()).toBe(1);
    advance(1);
    await otherWork();
    expect(await stored()).toBe(3);
    // Counted in memory meanwhile: the limit sees every request all along.
    const decision = await counter.hit(1, NOW, [{ name: 'minute', seconds: 60, limit: 4 }]);
    expect(decision.allowed).toBe(true);
    expect((await counter.hit(1, NOW, [{ name: 'minute', seconds: 60, limit: 4 }])).allowed).toBe(false);
  });

  it('are stored by the flush timer when no commit comes, and by the last commit after stop', async () => {
    const { counter, committer, stored, otherWork, flushes } = await counting(50);
    await counter.hit(1, NOW, windows);
    await otherWork();
    await counter.hit(1, NOW, windows);
    // The timer (real time, flushAfterMs) forces a commit that writes what is pending, though
    // the injected clock says no interval has passed since the last write.
    await expect.poll(() => flushes.length, { timeout: 5000 }).toBeGreaterThan(0);
    await Promise.all(flushes);
    expect(await stored()).toBe(2);
    await counter.hit(1, NOW, windows);
    counter.stop();
    await committer.run(async () => undefined);
    expect(await stored()).toBe(3);
  });

  it('take back a count given back, whether it was stored already or not', async () => {
    const { counter, stored, otherWork, advance } = await counting(60_000);
    const four: WindowLimit[] = [{ name: 'minute', seconds: 60, limit: 4 }];
    for (let i = 0; i < 4; i++) expect((await counter.hit(1, NOW, four)).allowed).toBe(true);
    advance(60_000);
    await otherWork();
    expect(await stored()).toBe(4);
    const counted = await counter.hit(1, NOW, [{ name: 'minute', seconds: 60, limit: 5 }]);
    await counter.giveBack(1, counted.second, 1);
    await counter.giveBack(1, counted.second, 1);
    // Two given back: one counted in memory, one already stored.
    expect((await counter.hit(1, NOW, four)).allowed).toBe(true);
    expect((await counter.hit(1, NOW, four)).allowed).toBe(false);
    advance(60_000);
    await otherWork();
    expect(await stored()).toBe(4);
  });
});
