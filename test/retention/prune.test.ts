import { describe, expect, it } from 'vitest';
import { pruneExpired } from '../../src/retention/prune.ts';
import { ManualClock } from '../helpers/clock.ts';
import { STORES } from '../helpers/stores.ts';
import { startTestServer } from '../helpers/server.ts';

describe.each(STORES)('pruning expired state (%s)', (kind) => {
  it('drops idempotency records after 24 h and rate-limit buckets after an hour, keeping fresh ones', async () => {
    const clock = new ManualClock('2026-11-21T10:00:00.000Z');
    const server = await startTestServer(kind, { clock });
    await server.verifiedDomain((await server.workspace('p')).id, 'p.test');
    const key = (await server.services.tenancy.createKey(1, { name: 'k' })).secret;
    const send = (idem: string) =>
      server.api('POST', '/emails', { key, body: { from: 'a@p.test', to: 'b@example.org', subject: 's', text: 't' }, headers: { 'Idempotency-Key': idem } });
    await send('old');
    clock.advance(23 * 3600_000);
    await send('young');
    const { db } = server.services;
    expect(Number((await db('idempotency_keys').count({ n: '*' }).first())!.n)).toBe(2);
    // Counts are stored within a second (the rate counter's flush), not in each request's commit.
    await expect.poll(async () => Number((await db('rate_limit_buckets').count({ n: '*' }).first())!.n), { timeout: 5000 }).toBe(2);

    clock.advance(2 * 3600_000);
    const removed = await pruneExpired(db, clock);
    expect(removed).toStrictEqual({ idempotency: 1, rateLimitBuckets: 2 });
    expect((await db('idempotency_keys').select('idem_key')).map((r: { idem_key: string }) => r.idem_key)).toStrictEqual(['young']);
    // The pruned key is fresh again; the young one still replays.
    expect((await send('young')).headers.get('idempotent-replayed')).toBe('true');
    expect((await send('old')).headers.get('idempotent-replayed')).toBeNull();
  });
});
