import { describe, expect, it } from 'vitest';
import { iso } from '../../src/core/time.ts';
import { ManualClock } from '../helpers/clock.ts';
import { STORES } from '../helpers/stores.ts';
import { deliveryEnv } from './env.ts';

const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const greylisted = { rcpt: { reply: { code: 451, message: '4.7.1 <grey@dest.test>: Recipient address rejected: Greylisted, try again in 60 seconds' } } };

async function recipient(env: Awaited<ReturnType<typeof deliveryEnv>>, emailId: number) {
  return env.server.services.db('recipients').where({ message_id: emailId }).first();
}

describe.each(STORES)('retries (%s)', (kind) => {
  it('retries a greylisted recipient at the schedule with jitter from the injected random source, and delivers on the third attempt', async () => {
    const clock = new ManualClock(T0);
    // 0.75 puts each delay at +5% of its interval: 1m → 63 s, 5m → 315 s.
    const env = await deliveryEnv(kind, { clock, random: () => 0.75 });
    env.mx('dest.test');
    env.sink.script('grey@dest.test', [greylisted, greylisted]);
    const id = await env.send({ to: 'grey@dest.test' });
    const worker = env.worker();

    expect(await worker.runOnce()).toMatchObject({ claimed: 1, deferred: 1 });
    let row = await recipient(env, id);
    expect(row).toMatchObject({ status: 'deferred', attempts: 1, due_at: T0 + 63_000, last_mx: 'mx.dest.test' });
    expect(row.last_response).toMatch(/^451 4\.7\.1 .*Greylisted/);
    let detail = await env.detail(id);
    expect(detail.status).toBe('deferred');
    expect(detail.events).toStrictEqual([]);

    clock.set(T0 + 62_999);
    expect(await worker.runOnce()).toMatchObject({ claimed: 0 });
    clock.set(T0 + 63_000);
    expect(await worker.runOnce()).toMatchObject({ claimed: 1, deferred: 1 });
    row = await recipient(env, id);
    expect(row).toMatchObject({ status: 'deferred', attempts: 2, due_at: T0 + 63_000 + 315_000 });

    clock.set(T0 + 378_000 - 1);
    expect(await worker.runOnce()).toMatchObject({ claimed: 0 });
    clock.set(T0 + 378_000);
    expect(await worker.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
    detail = await env.detail(id);
    expect(detail.status).toBe('delivered');
    expect(detail.recipients[0]).toMatchObject({ status: 'delivered', attempts: 3 });
    expect(detail.events).toHaveLength(1);
    expect(detail.events[0]).toMatchObject({ event: 'email.delivered', occurred_at: iso(T0 + 378_000) });
    expect(env.sink.messages).toHaveLength(1);
  });

  it('gives up at delivery.maxAge: `failed`, one transient bounce with status 4.4.7 and the last remote reply', async () => {
    const clock = new ManualClock(T0);
    const env = await deliveryEnv(kind, { clock, random: () => 0.5 });
    env.mx('dest.test');
    const attempts = Array.from({ length: 40 }, (_, i) => ({ rcpt: { reply: { code: 451, message: `4.3.0 Try again later (attempt ${i + 1})` } } }));
    env.sink.script('grey@dest.test', attempts);
    const id = await env.send({ to: 'grey@dest.test' });
    const worker = env.worker();

    const times: number[] = [];
    for (let pass = 0; pass < 40; pass++) {
      times.push(clock.now());
      await worker.runOnce();
      const row = await recipient(env, id);
      if (row.status !== 'deferred') break;
      clock.set(row.due_at);
    }
    // 1m 5m 15m 30m 1h 2h 4h 8h, then every 8h; the last try is at exactly 72 h.
    const gaps = times.slice(1).map((t, i) => (t - times[i]!) / 1000);
    expect(gaps.slice(0, 10)).toStrictEqual([60, 300, 900, 1800, 3600, 7200, 14400, 28800, 28800, 28800]);
    expect(times.at(-1)).toBe(T0 + 72 * 3600_000);

    const detail = await env.detail(id);
    expect(detail.status).toBe('failed');
    expect(detail.recipients[0]).toMatchObject({ status: 'failed', attempts: times.length });
    expect(detail.events).toHaveLength(1);
    expect(detail.events[0]).toStrictEqual({
      event: 'email.bounced',
      occurred_at: iso(T0 + 72 * 3600_000),
      email_id: id,
      recipient: 'grey@dest.test',
      bounce_type: 'transient',
      provider: { response: `451 4.3.0 Try again later (attempt ${times.length})`, reporting_mta: 'mx.dest.test', status: '4.4.7', smtp_code: 451 },
    });
    // A transient bounce does not suppress.
    expect((await env.server.api('GET', '/suppressions/transactional/grey@dest.test', { key: env.ws.apiKey })).status).toBe(404);
    expect(await worker.runOnce()).toMatchObject({ claimed: 0 });
  });

  it('defers, never bounces, while the resolver answers SERVFAIL, and delivers once DNS recovers', async () => {
    const clock = new ManualClock(T0);
    const env = await deliveryEnv(kind, { clock, random: () => 0.5 });
    env.dns.servfail('dest.test');
    const id = await env.send({ to: 'someone@dest.test' });
    const worker = env.worker();

    expect(await worker.runOnce()).toMatchObject({ claimed: 1, deferred: 1 });
    const row = await recipient(env, id);
    expect(row).toMatchObject({ status: 'deferred', attempts: 1, due_at: T0 + 60_000, last_mx: null });
    expect(row.last_response).toMatch(/DNS lookup of MX for dest\.test failed temporarily/);
    expect((await env.detail(id)).events).toStrictEqual([]);
    expect(env.sink.connections).toHaveLength(0);

    env.dns.clear('dest.test');
    env.mx('dest.test');
    clock.set(T0 + 60_000);
    expect(await worker.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
    expect((await env.detail(id)).status).toBe('delivered');
  });
});
