import { describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.ts';
import { deliveryEnv } from './env.ts';

async function sendMany(env: Awaited<ReturnType<typeof deliveryEnv>>, n: number, to: (i: number) => string): Promise<number[]> {
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

  // SPEC's numbers are a 30 s lease and a 40 s stall; the same ratio at lease 2 s and stall 3 s
  // keeps the suite fast. A second worker polls the queue all along: had the first worker not
  // renewed its lease, the second would have claimed the row after 2 s and sent it again.
  it('renews the lease of a slow transaction: a sink stalling 3 s on DATA with a 2 s lease gets the message once', async () => {
    const env = await deliveryEnv(kind, { delivery: { leaseSeconds: 2 } });
    env.mx('dest.test');
    env.sink.script('slow@dest.test', [{ data: { stallMs: 3000 } }]);
    const id = await env.send({ to: 'slow@dest.test' });
    // The first worker claims and then sleeps long; the second polls often, so it would be the
    // one to find the row if the lease ran out.
    const first = env.worker({ pollMs: 10_000 });
    const second = env.worker({ pollMs: 20 });
    first.start();
    await env.sink.waitForConnections(1);
    second.start();
    await env.sink.waitForMessages(1);
    // A duplicate from the worker that lost the race would have started at the 2 s mark and
    // arrived first; stopping lets the stalled transaction finish and record its outcome.
    await first.stop();
    await second.stop();
    expect((await env.detail(id)).status).toBe('delivered');
    expect(env.sink.messages).toHaveLength(1);
    expect(await second.runOnce()).toMatchObject({ claimed: 0 });
  });

  it('sends a scheduled message within 1 s of its time and not before; a canceled one never', async () => {
    const env = await deliveryEnv(kind);
    env.mx('dest.test');
    const at = Date.now() + 1500;
    const scheduled = await env.send({ to: 'later@dest.test', scheduled_at: new Date(at).toISOString() });
    const canceled = await env.send({ to: 'never@dest.test', scheduled_at: new Date(at).toISOString() });
    expect((await env.server.api('POST', `/emails/${canceled}/cancel`, { key: env.ws.apiKey })).status).toBe(200);
    expect((await env.detail(scheduled)).status).toBe('scheduled');

    const worker = env.worker();
    worker.start();
    await env.sink.waitForMessages(1);
    const arrived = Date.now();
    expect(arrived).toBeGreaterThanOrEqual(at);
    expect(arrived - at).toBeLessThan(1000);
    await worker.stop();
    expect((await env.detail(scheduled)).status).toBe('delivered');
    expect(env.sink.messages.map((m) => m.to)).toStrictEqual([['later@dest.test']]);
    expect((await env.detail(canceled)).status).toBe('canceled');
  });

  it('on stop, gives a transaction that outlives the grace period back to the queue for another worker', async () => {
    const env = await deliveryEnv(kind);
    env.mx('dest.test');
    env.sink.script('slow@dest.test', [{ data: { stallMs: 2000 } }]);
    const id = await env.send({ to: 'slow@dest.test' });
    const worker = env.worker({ stopGraceMs: 100 });
    worker.start();
    await env.sink.waitForConnections(1);
    await worker.stop();
    const row = await env.server.services.db('recipients').where({ message_id: id }).first();
    expect(row).toMatchObject({ status: 'queued', lease_owner: null, attempts: 0 });
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
