import { describe, expect, it } from 'vitest';
import { pruneExpired } from '../../src/retention/prune.ts';
import { pruneRetained } from '../../src/retention/messages.ts';
import { migrate } from '../../src/store/migrate.ts';
import { queueRepo } from '../../src/store/queue.ts';
import { rateLimits } from '../../src/store/rateLimits.ts';
import { windowsFor } from '../../src/ratelimit/sliding.ts';
import { BatchedRateLimit } from '../../src/ratelimit/batched.ts';
import type { RecipientRow } from '../../src/store/messages.ts';
import { ManualClock } from '../helpers/clock.ts';
import { messageWith, migratedStore, openStore } from '../helpers/db.ts';
import { CLUSTER_PG } from '../helpers/cluster.ts';

// The periodic jobs every serve process runs, each with a pool of its own on one PostgreSQL
// database, as three processes would: no leader, and exactly one effect per due item.

const AT = 1_700_000_000_000;

describe.skipIf(!CLUSTER_PG)('periodic jobs run by three processes at once (pg)', () => {
  it('start-up: three nodes migrating one empty database at once all start; the schema is built once', async () => {
    const { open } = await openStore('pg');
    const applied = await Promise.all([open(), open(), open()].map((w) => migrate(w)));
    expect(applied.filter((names) => names.length > 0)).toHaveLength(1);
    expect(applied.flat().length).toBeGreaterThan(0);
  });

  it('scheduler: 600 rows due at one instant are released by three workers together, each exactly once', async () => {
    const { db, open } = await migratedStore('pg');
    const ids: number[] = [];
    for (let i = 0; i < 6; i++) ids.push(...(await messageWith(db, Array(100).fill('scheduled'), AT)).recipientIds);
    const workers = [open(), open(), open()];
    const released = await Promise.all(workers.map((w) => queueRepo.releaseScheduled(w, AT + 1)));
    expect(released.reduce((a, b) => a + b, 0)).toBe(ids.length);
    expect(
      await db('recipients')
        .where({ status: 'queued' })
        .count({ n: '*' })
        .then((r) => Number(r[0]!.n)),
    ).toBe(ids.length);
    expect(await db('messages').pluck('status')).toStrictEqual(Array(6).fill('queued'));
    // Nothing is due before its time.
    await messageWith(db, ['scheduled'], AT + 60_000);
    expect(await queueRepo.releaseScheduled(workers[0]!, AT + 1)).toBe(0);
  });

  it('lease expiry: rows of a dead worker are claimed again by exactly one of the others', async () => {
    const { db, open } = await migratedStore('pg');
    // 300 rows leased by a worker that died; their leases ran out at AT.
    const { recipientIds } = await messageWith(db, Array(300).fill('sending'), AT);
    await db('recipients').update({ lease_owner: 'dead:1:0', lease_until: AT, due_at: AT });
    const workers = [open(), open(), open()];
    const claimed = await Promise.all(
      workers.map(async (w, i) => {
        const rows: RecipientRow[] = [];
        for (;;) {
          const got = await queueRepo.claim(w, { owner: `live:${i}`, now: AT + 1, leaseMs: 30_000, limit: 40 });
          if (got.length === 0) return rows;
          rows.push(...got);
        }
      }),
    );
    const all = claimed
      .flat()
      .map((r) => r.id)
      .sort((a, b) => a - b);
    expect(all).toStrictEqual([...recipientIds].sort((a, b) => a - b));
    const owners = await db('recipients').distinct('lease_owner').pluck('lease_owner');
    expect(owners.every((o: string) => o.startsWith('live:'))).toBe(true);
    // A live lease is not taken.
    expect(await queueRepo.claim(workers[0]!, { owner: 'late', now: AT + 2, leaseMs: 30_000, limit: 10 })).toHaveLength(0);
  });

  it('retention: three processes pruning at once remove each expired item once, and fail nothing', async () => {
    const { db, open } = await migratedStore('pg');
    const old: number[] = [];
    for (let i = 0; i < 5; i++) old.push((await messageWith(db, ['delivered'], AT)).messageId);
    const fresh = await messageWith(db, ['delivered'], AT + 40 * 86_400_000);
    await db('message_contents').insert((await db('messages').pluck('id')).map((id: number) => ({ message_id: id, content: '{"text":"kept until pruned"}' })));
    await db('idempotency_keys').insert(
      Array.from({ length: 50 }, (_, i) => ({ api_key_id: 1, idem_key: `k${i}`, request_hash: 'h', response_status: 201, response_body: '{}', created_at: AT })),
    );
    const now = AT + 31 * 86_400_000;
    const runs = await Promise.all(
      [open(), open(), open()].map(async (w) => ({ ...(await pruneExpired(w, new ManualClock(now))), ...(await pruneRetained(w, now, 30)) })),
    );
    expect(runs.reduce((n, r) => n + r.idempotency, 0)).toBe(50);
    expect(runs.reduce((n, r) => n + r.messageBodies, 0)).toBe(old.length);
    expect(await db('message_contents').pluck('message_id')).toStrictEqual([fresh.messageId]);
  });

  it('rate limits: a count stamped a second ahead by another process still counts, so 3 pools admit exactly the limit', async () => {
    const { open } = await migratedStore('pg');
    const windows = windowsFor({ perMinute: 30, perHour: 1000 });
    const pools = [open(), open(), open()];
    // Each pool's clock is a second off from the next, as the clocks of three processes reading
    // the time at slightly different moments around a second boundary.
    // Each process sends the hits that arrive while its previous call is in flight as one call.
    const limiters = pools.map(
      (pool) =>
        new BatchedRateLimit(
          (groups, seconds) => rateLimits.hitGroups(pool, groups, seconds),
          (keyId, second, count) => rateLimits.giveBack(pool, keyId, second, count),
        ),
    );
    const decisions = await Promise.all(Array.from({ length: 90 }, (_, i) => limiters[i % 3]!.hit(1, AT + (i % 3) * 1000, windows)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(30);
    expect(decisions.filter((d) => !d.allowed).every((d) => d.retryAfter! > 0)).toBe(true);
    // Each admitted request saw the count as it was just before it: every remaining figure once.
    expect(
      decisions
        .filter((d) => d.allowed)
        .map((d) => d.remaining)
        .sort((a, b) => a - b),
    ).toStrictEqual(Array.from({ length: 30 }, (_, i) => i));
  });

  it('lease renewal does not wait for a row its own outcome commit holds: it renews the others and that one next time', async () => {
    const { db, open } = await migratedStore('pg');
    const { recipientIds } = await messageWith(db, ['sending', 'sending', 'sending'], AT);
    await db('recipients').update({ lease_owner: 'w1', lease_until: AT + 30_000, due_at: AT + 30_000 });
    const renewer = open();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    // An outcome commit of the same worker, holding the second row until the test lets it go.
    const outcome = open().transaction(async (tx) => {
      expect(await queueRepo.holdsLease(tx, 'w1', recipientIds[1]!, AT + 1)).toBe(true);
      locked();
      await held;
    });
    await isLocked;
    expect(await queueRepo.renew(renewer, 'w1', recipientIds, AT + 1000, 30_000)).toBe(2);
    release();
    await outcome;
    expect(await queueRepo.renew(renewer, 'w1', recipientIds, AT + 2000, 30_000)).toBe(3);
    expect(await db('recipients').orderBy('id').pluck('lease_until')).toStrictEqual([AT + 32_000, AT + 32_000, AT + 32_000]);
  });
});
