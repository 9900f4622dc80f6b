import { describe, expect, it } from 'vitest';
import { iso } from '../../src/core/time.ts';
import { ManualClock } from '../helpers/clock.ts';
import { STORES } from '../helpers/stores.ts';
import { deliveryEnv, type DeliveryEnv } from './env.ts';

const T0 = Date.parse('2026-11-21T10:00:00.000Z');

/** A gate the sink waits on: the test decides when a held transaction may go on. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

const recipientRow = (env: DeliveryEnv, emailId: number) => env.server.services.db('recipients').where({ message_id: emailId }).first();

/** Resolves once the worker's lease renewal has moved the row's lease to `until`. */
async function leaseReaches(env: DeliveryEnv, emailId: number, until: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Number((await recipientRow(env, emailId)).lease_until) !== until) {
    if (Date.now() > deadline) throw new Error(`the lease never reached ${iso(until)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function sendMany(env: DeliveryEnv, n: number, to: (i: number) => string): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i += 25) {
    const batch = Array.from({ length: Math.min(25, n - i) }, (_, j) => env.send({ to: to(i + j), subject: `m${i + j}` }));
    ids.push(...(await Promise.all(batch)));
  }
  return ids;
}

describe.each(STORES)('the delivery loop (%s)', (kind) => {
  it('sends 200 messages to one domain over at most maxConnectionsPerHost connections, each reused', async () => {
    const env = await deliveryEnv(kind, { delivery: { maxConnectionsPerHost: 3, concurrency: 50 } });
    env.mx('dest.test');
    await sendMany(env, 200, (i) => `user${i}@dest.test`);
    const worker = env.worker();
    worker.start();
    await env.sink.waitForMessages(200);
    await worker.stop();
    expect(await worker.runOnce()).toMatchObject({ claimed: 0 });
    expect(new Set(env.sink.messages.map((m) => m.to[0])).size).toBe(200);
    expect(env.sink.connections.length).toBeLessThanOrEqual(3);
    for (const c of env.sink.connections) expect(c.transactions).toBeGreaterThan(1);
    expect(env.sink.connections.reduce((sum, c) => sum + c.transactions, 0)).toBe(200);
  });

  // SPEC's numbers are a 30 s lease and a 40 s stall. Here the lease is 2 s on the injected
  // clock and the sink holds DATA until the test opens a gate: the clock moves past the first
  // lease while the transaction is held, and a second worker finds nothing to claim.
  it('renews the lease of a held transaction: past its first lease the row is not claimed again, and the message arrives once', async () => {
    const clock = new ManualClock(T0);
    const env = await deliveryEnv(kind, { clock, delivery: { leaseSeconds: 2 } });
    env.mx('dest.test');
    const hold = gate();
    env.sink.script('slow@dest.test', [{ data: { until: hold.opened } }]);
    const id = await env.send({ to: 'slow@dest.test' });
    const first = env.worker({ pollMs: 10_000 });
    first.start();
    await env.sink.waitForConnections(1);
    expect((await recipientRow(env, id)).lease_until).toBe(T0 + 2000);

    clock.set(T0 + 1500);
    await leaseReaches(env, id, T0 + 3500);
    clock.set(T0 + 3000);
    expect(await env.worker().runOnce()).toMatchObject({ claimed: 0 });

    hold.open();
    await env.sink.waitForMessages(1);
    await first.stop();
    expect((await env.detail(id)).status).toBe('delivered');
    expect(env.sink.messages).toHaveLength(1);
  });

  it('sends a scheduled message at its time on the clock and not before; a canceled one never', async () => {
    const clock = new ManualClock(T0);
    const env = await deliveryEnv(kind, { clock });
    env.mx('dest.test');
    const at = T0 + 1500;
    const scheduled = await env.send({ to: 'later@dest.test', scheduled_at: iso(at) });
    const canceled = await env.send({ to: 'never@dest.test', scheduled_at: iso(at) });
    expect((await env.server.api('POST', `/emails/${canceled}/cancel`, { key: env.ws.apiKey })).status).toBe(200);

    const worker = env.worker({ pollMs: 20 });
    clock.set(at - 1);
    expect(await worker.runOnce()).toMatchObject({ claimed: 0 });
    expect((await env.detail(scheduled)).status).toBe('scheduled');

    // The running loop's scheduler releases it as soon as the clock reaches its time.
    clock.set(at);
    worker.start();
    await env.sink.waitForMessages(1);
    await worker.stop();
    const detail = await env.detail(scheduled);
    expect(detail.status).toBe('delivered');
    expect(detail.events.map((e: { occurred_at: string }) => e.occurred_at)).toStrictEqual([iso(at)]);
    expect(env.sink.messages.map((m) => m.to)).toStrictEqual([['later@dest.test']]);
    expect((await env.detail(canceled)).status).toBe('canceled');
  });

  it('on stop, gives a transaction that outlives the grace period back to the queue for another worker', async () => {
    const env = await deliveryEnv(kind);
    env.mx('dest.test');
    const hold = gate();
    env.sink.script('slow@dest.test', [{ data: { until: hold.opened } }]);
    const id = await env.send({ to: 'slow@dest.test' });
    const worker = env.worker({ stopGraceMs: 100 });
    worker.start();
    await env.sink.waitForConnections(1);
    await worker.stop();
    hold.open();
    expect(await recipientRow(env, id)).toMatchObject({ status: 'queued', lease_owner: null, attempts: 0 });
    expect((await env.detail(id)).status).toBe('queued');
    expect(await env.worker().runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
  });

  it('runs as the delivery role of the server and counts outcomes on /metrics', async () => {
    const env = await deliveryEnv(kind, { roles: ['api', 'delivery'] });
    env.mx('dest.test');
    env.sink.script('gone@dest.test', [{ rcpt: { reply: { code: 550, message: '5.1.1 No such user' } } }]);
    const id = await env.send({ to: ['ok@dest.test', 'gone@dest.test'] });
    await env.sink.waitForMessages(1);
    await env.server.roles.delivery!.close();
    expect((await env.detail(id)).status).toBe('partial');
    const metrics = await (await fetch(`${env.server.url}/metrics`)).text();
    expect(metrics).toContain('mailsvc_delivery_outcomes_total{outcome="delivered",bounce_type=""} 1');
    expect(metrics).toContain('mailsvc_delivery_outcomes_total{outcome="bounced",bounce_type="permanent"} 1');
    expect(metrics).toMatch(/mailsvc_delivery_attempt_duration_seconds_count\{outcome="delivered"\} 1/);
  });
});

describe('the delivery loop on SQLite', () => {
  it('claims in the shared commits: every transaction that writes while 60 messages are delivered is one of the group committer', async () => {
    const env = await deliveryEnv('sqlite', { delivery: { concurrency: 10 } });
    env.mx('dest.test');
    await sendMany(env, 60, (i) => `user${i}@dest.test`);
    const { db, committer } = env.server.services;
    // One connection: the statements arrive in order, each transaction's between BEGIN and COMMIT.
    let writes = false;
    let writingTransactions = 0;
    const onQuery = (q: { sql: string }) => {
      if (/^begin\b/i.test(q.sql)) writes = false;
      else if (/^(insert|update|delete)\b/i.test(q.sql)) writes = true;
      else if (/^commit\b/i.test(q.sql) && writes) writingTransactions += 1;
    };
    db.on('query', onQuery);
    const before = committer.stats().commits;
    const worker = env.worker();
    worker.start();
    await env.sink.waitForMessages(60);
    await worker.stop();
    db.off('query', onQuery);
    expect(env.sink.messages).toHaveLength(60);
    // Ten at a time: at least six claims, and the outcomes; none wrote in a transaction of its own.
    expect(writingTransactions).toBeGreaterThanOrEqual(6);
    expect(committer.stats().commits - before).toBe(writingTransactions);
  });
});
