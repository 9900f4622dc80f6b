import { describe, expect, it } from 'vitest';
import { ManualClock } from '../helpers/clock.ts';
import { STORES } from '../helpers/stores.ts';
import { RawSmtp } from '../inbound/smtp-client.ts';
import { signatureValid, startReceiver } from '../webhooks/receiver.ts';
import { until } from '../webhooks/world.ts';
import { compose, routeWorld } from './world.ts';

const plain = (n: number) => compose({ from: 'a@plain.test', to: 'in@acme.test', subject: `message ${n}`, text: `body ${n}` });

describe.each(STORES)('route deliveries (%s)', (kind) => {
  it('retries a failing receiver with the identical signed bytes on the webhook schedule and logs every attempt', async () => {
    const clock = new ManualClock();
    const world = await routeWorld(kind, { clock, webhooks: { retrySchedule: [10, 60] } });
    const receiver = await startReceiver((_req, n) => (n < 2 ? { status: 503, body: `busy ${n + 1}` } : { status: 200, body: 'thanks' }));
    const route = await world.route('in@acme.test', receiver.url);
    const id = Number(/received as (\d+)/.exec(await world.send(await plain(1), { from: 'a@plain.test', to: ['in@acme.test'] }))![1]);
    const log = async () => (await world.server.api('GET', `/routes/${route.id}/deliveries`, { key: world.apiKey })).body.data;

    await receiver.waitFor(1);
    await until(async () => (await log()).length === 1, 'the first attempt logged');
    clock.advance(10_000);
    await receiver.waitFor(2);
    await until(async () => (await log()).length === 2, 'the second attempt logged');
    clock.advance(60_000);
    const got = await receiver.waitFor(3);
    await until(async () => (await log()).length === 3, 'the third attempt logged');

    expect(new Set(got.map((r) => r.raw.toString('utf8'))).size).toBe(1);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(1);
    for (const r of got) expect(signatureValid(r, route.secret)).toBe(true);
    expect((await log()).map((e: Record<string, unknown>) => [e.attempt, e.response_code, e.response_body, e.inbound_id])).toStrictEqual([
      [3, 200, 'thanks', id],
      [2, 503, 'busy 2', id],
      [1, 503, 'busy 1', id],
    ]);
    const shown = (await world.server.api('GET', `/routes/${route.id}`, { key: world.apiKey })).body;
    expect([shown.status, shown.failure_count, shown.last_success_at]).toStrictEqual(['active', 0, new Date(clock.now()).toISOString()]);

    // A replay sends it again, the same bytes.
    const replay = await world.server.api('POST', `/routes/${route.id}/replay`, { key: world.apiKey, body: { since: '2000-01-01T00:00:00Z' } });
    expect(replay.body).toStrictEqual({ id: route.id, queued: 1 });
    const again = await receiver.waitFor(4);
    expect(again[3]!.raw.equals(got[0]!.raw)).toBe(true);
  });

  it('gives a receiver that was down for an hour every message once it is back, in order', async () => {
    const clock = new ManualClock();
    const world = await routeWorld(kind, { clock, webhooks: { pauseAfter: 3, probeInterval: 300 } });
    let down = true;
    const receiver = await startReceiver(() => (down ? { status: 503, body: 'down' } : { status: 200, body: 'ok' }));
    const route = await world.route('*@acme.test', receiver.url);
    const ids: number[] = [];
    for (let n = 1; n <= 5; n++) {
      const reply = await world.send(await plain(n), { from: 'a@plain.test', to: [`user${n}@acme.test`] });
      ids.push(Number(/received as (\d+)/.exec(reply)![1]));
    }
    // Three failures pause the route; then one probe, the oldest message, every five minutes, for
    // an hour: more attempts than the retry series holds, and none of them gives a message up.
    await receiver.waitFor(3);
    await until(async () => (await world.server.api('GET', `/routes/${route.id}`, { key: world.apiKey })).body.status === 'paused' || undefined, 'the route paused');
    const logged = async (n: number) =>
      until(
        async () => (await world.server.api('GET', `/routes/${route.id}/deliveries`, { key: world.apiKey })).body.data.length === n || undefined,
        `${n} attempts logged`,
      );
    await logged(3);
    for (let probe = 1; probe <= 12; probe++) {
      clock.advance(300_000);
      // The next probe is due five minutes after this one's failure is written.
      await logged(3 + probe);
    }
    down = false;
    clock.advance(300_000);
    await receiver.waitFor(3 + 12 + 5);
    const answered = receiver.requests.slice(15).map((r) => JSON.parse(r.raw.toString('utf8')).id as number);
    expect(answered).toStrictEqual(ids);
    await until(async () => (await world.server.api('GET', `/routes/${route.id}`, { key: world.apiKey })).body.status === 'active' || undefined, 'the route active');
  });

  it('refuses a message over inbound.maxSize whole and stores nothing; caps recipients at 100', async () => {
    const world = await routeWorld(kind, { inbound: { maxSize: 4096 } });
    const receiver = await startReceiver();
    await world.route('*@acme.test', receiver.url);
    const smtp = await RawSmtp.connect(world.port);
    await smtp.command('EHLO client.test');
    await smtp.command('MAIL FROM:<a@plain.test>');
    for (let i = 0; i < 100; i++) expect([i, (await smtp.command(`RCPT TO:<u${i}@acme.test>`)).code]).toStrictEqual([i, 250]);
    expect(await smtp.command('RCPT TO:<u100@acme.test>')).toStrictEqual({ code: 452, text: '4.5.3 Too many recipients' });
    expect(await smtp.data(`Subject: big\r\n\r\n${'x'.repeat(5000)}\r\n`)).toStrictEqual({ code: 552, text: '5.3.4 Message too big' });
    await smtp.quit();
    expect((await world.server.api('GET', '/inbound', { key: world.apiKey })).body.data).toStrictEqual([]);
    expect(await world.server.services.db('webhook_deliveries').whereNull('event_id')).toStrictEqual([]);
  });
});
