import { describe, expect, it } from 'vitest';
import { deliveryEnv } from '../delivery/env.ts';
import { ManualClock } from '../helpers/clock.ts';
import { STORES } from '../helpers/stores.ts';
import { signatureValid, startReceiver } from './receiver.ts';
import { hookWorld, until } from './world.ts';

describe.each(STORES)('webhook dispatcher (%s)', (kind) => {
  it('sends a receiver that fails twice the identical signed bytes three times and logs each attempt', async () => {
    const clock = new ManualClock();
    const world = await hookWorld(kind, { clock, webhooks: { retrySchedule: [10, 60] } });
    const receiver = await startReceiver((_req, n) => (n < 2 ? { status: 503, body: `busy ${n + 1}` } : { status: 200, body: 'thanks' }));
    const hook = await world.endpoint(receiver.url);
    const payload = await world.emit('email.delivered');

    await receiver.waitFor(1);
    await until(async () => (await world.log(hook.id)).length === 1, 'the first attempt logged');
    expect((await world.endpointRow(hook.id)).failure_count).toBe(1);
    clock.advance(10_000);
    await receiver.waitFor(2);
    await until(async () => (await world.log(hook.id)).length === 2, 'the second attempt logged');
    // The second retry is due a minute after the second failure.
    const [pending] = await world.server.services.db('webhook_deliveries').where({ endpoint_id: hook.id });
    expect([pending.status, pending.attempts, Number(pending.due_at)]).toStrictEqual(['pending', 2, clock.now() + 60_000]);
    clock.advance(60_000);
    const got = await receiver.waitFor(3);
    await until(async () => (await world.log(hook.id)).length === 3, 'the third attempt logged');

    expect(got.map((r) => r.raw.toString('utf8'))).toStrictEqual([payload, payload, payload]);
    for (const r of got) {
      expect(signatureValid(r, hook.secret)).toBe(true);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['user-agent']).toMatch(/^mailsvc-webhooks\//);
    }
    const log = await world.log(hook.id);
    expect(log.map((e) => [e.attempt, e.response_code, e.response_body, e.event, e.email_id])).toStrictEqual([
      [3, 200, 'thanks', 'email.delivered', world.messageId],
      [2, 503, 'busy 2', 'email.delivered', world.messageId],
      [1, 503, 'busy 1', 'email.delivered', world.messageId],
    ]);
    const endpoint = await world.endpointRow(hook.id);
    expect([endpoint.status, endpoint.failure_count, endpoint.last_success_at]).toStrictEqual(['active', 0, clock.now()]);
  });

  it('tells every subscribed endpoint once about a delivered and a bounced message, with exactly the fields of the public payload', async () => {
    const env = await deliveryEnv(kind, { roles: ['api', 'delivery', 'webhooks'], config: { webhooks: { allowPrivateAddresses: true } } });
    env.mx('example.org');
    env.sink.script('gone@example.org', [{ rcpt: { reply: { code: 550, message: '5.1.1 No such user' } } }]);
    const a = await startReceiver();
    const b = await startReceiver();
    const bouncesOnly = await startReceiver();
    const hooks: { id: number; secret: string }[] = [];
    for (const [r, events] of [[a], [b, ['email.delivered', 'email.bounced']], [bouncesOnly, ['email.bounced']]] as const) {
      const res = await env.server.api('POST', '/webhooks', { key: env.ws.apiKey, body: { url: r.url, ...(events ? { events } : {}) } });
      hooks.push(res.body);
    }
    const delivered = await env.send({ to: 'ok@example.org' });
    const [toA] = await a.waitFor(1);
    const [toB] = await b.waitFor(1);
    const bounced = await env.send({ to: 'gone@example.org' });
    await a.waitFor(2);
    await b.waitFor(2);
    const [toBounces] = await bouncesOnly.waitFor(1);

    for (const [r, hook] of [
      [a, hooks[0]],
      [b, hooks[1]],
    ] as const) {
      expect(r.requests.every((req) => signatureValid(req, hook.secret))).toBe(true);
      expect(r.requests.every((req) => !signatureValid(req, hooks[2].secret))).toBe(true);
    }
    expect(signatureValid(toBounces, hooks[2].secret)).toBe(true);
    const first = JSON.parse(toA.raw.toString());
    expect(toB.raw.equals(toA.raw)).toBe(true);
    expect(Object.keys(first).sort()).toStrictEqual(['email_id', 'event', 'occurred_at', 'provider', 'recipient']);
    expect(first).toMatchObject({ event: 'email.delivered', email_id: delivered, recipient: 'ok@example.org' });
    expect(first.occurred_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(typeof first.provider.response).toBe('string');
    expect(first.provider.reporting_mta).toBe('mx.example.org');
    const bounce = JSON.parse(toBounces.raw.toString());
    expect(Object.keys(bounce).sort()).toStrictEqual(['bounce_type', 'email_id', 'event', 'occurred_at', 'provider', 'recipient']);
    expect(bounce).toMatchObject({ event: 'email.bounced', email_id: bounced, recipient: 'gone@example.org', bounce_type: 'permanent' });
    expect(bounce.provider.response).toContain('5.1.1 No such user');
    // The message's own history holds the same bytes that were posted.
    expect((await env.detail(delivered)).events).toStrictEqual([first]);
    expect(a.requests[1].raw.equals(toBounces.raw)).toBe(true);
    // Exactly one POST per subscribed endpoint: every delivery is finished, none is pending.
    const rows = await until(async () => {
      const all = await env.server.services.db('webhook_deliveries').orderBy('id');
      return all.every((r: { status: string }) => r.status !== 'pending') && all;
    }, 'every delivery finished');
    expect(rows.map((r: { endpoint_id: number; status: string }) => [r.endpoint_id, r.status])).toStrictEqual([
      [hooks[0].id, 'delivered'],
      [hooks[1].id, 'delivered'],
      [hooks[0].id, 'delivered'],
      [hooks[1].id, 'delivered'],
      [hooks[2].id, 'delivered'],
    ]);
    expect([a.requests.length, b.requests.length, bouncesOnly.requests.length]).toStrictEqual([2, 2, 1]);
  });

  it('sends each event only to the endpoints subscribed to it, signed with each endpoint’s own secret, the stored bytes unmodified', async () => {
    const world = await hookWorld(kind);
    const all = await startReceiver();
    const bounces = await startReceiver();
    const allHook = await world.endpoint(all.url);
    const bounceHook = await world.endpoint(bounces.url, ['email.bounced']);
    const delivered = await world.emit('email.delivered');
    const bounced = await world.emit('email.bounced', {
      bounceType: 'permanent',
      provider: { response: '550 5.1.1 <r0@example.org>: Recipient address rejected: User unknown', reporting_mta: 'mx.example.org', status: '5.1.1', smtp_code: 550 },
    });
    const complained = await world.emit('email.complained', {
      provider: {
        response: 'This is an email abuse report for an email message received from IP 192.0.2.1',
        reporting_mta: 'feedback.example.org',
        feedback_type: 'abuse',
      },
    });
    const got = await all.waitFor(3);
    const [onlyBounce] = await bounces.waitFor(1);
    expect(got.map((r) => r.raw.toString())).toStrictEqual([delivered, bounced, complained]);
    expect(got.every((r) => signatureValid(r, allHook.secret))).toBe(true);
    expect(onlyBounce.raw.toString()).toBe(bounced);
    expect(signatureValid(onlyBounce, bounceHook.secret)).toBe(true);
    expect(signatureValid(onlyBounce, allHook.secret)).toBe(false);
    const body = JSON.parse(onlyBounce.raw.toString());
    expect(Object.keys(body).sort()).toStrictEqual(['bounce_type', 'email_id', 'event', 'occurred_at', 'provider', 'recipient']);
    expect(body.provider).toStrictEqual({
      response: '550 5.1.1 <r0@example.org>: Recipient address rejected: User unknown',
      reporting_mta: 'mx.example.org',
      status: '5.1.1',
      smtp_code: 550,
    });
    expect(JSON.parse(got[2].raw.toString()).provider.feedback_type).toBe('abuse');
    // Nothing else arrives for the bounce-only endpoint.
    await until(async () => (await world.log(allHook.id)).length === 3, 'all three logged');
    expect(bounces.requests).toHaveLength(1);
  });

  it('counts a receiver that never answers as a failed attempt after the timeout without holding up another endpoint', async () => {
    const world = await hookWorld(kind, { webhooks: { timeout: 5 } });
    const dead = await startReceiver(() => 'hang');
    const live = await startReceiver();
    const deadHook = await world.endpoint(dead.url);
    await world.endpoint(live.url);
    await world.emit('email.delivered');
    await dead.waitFor(1);
    const started = Date.now();
    // Both arrive while the dead receiver's request is still waiting out its 5 s.
    await live.waitFor(1, 4_000);
    await world.emit('email.opened');
    await live.waitFor(2, 4_000);
    expect(Date.now() - started).toBeLessThan(4_500);
    const [entry] = await until(
      async () => {
        const log = await world.log(deadHook.id);
        return log.length === 1 && log;
      },
      'the timed-out attempt logged',
      10_000,
    );
    expect([entry.attempt, entry.response_code, entry.error]).toStrictEqual([1, null, 'timed out after 5 s']);
    expect(entry.duration_ms).toBeGreaterThanOrEqual(4_900);
    expect((await world.endpointRow(deadHook.id)).failure_count).toBe(1);
  });

  it('with the default config refuses at connect time a name that resolves to a loopback address after registration', async () => {
    const world = await hookWorld(kind, { webhooks: { allowPrivateAddresses: false } });
    const receiver = await startReceiver();
    // Registered while allowed (as if the name resolved elsewhere then); the connect is checked again.
    const row = await world.server.services.webhooks.create(world.workspaceId, { url: 'https://8.8.8.8/hook' });
    await world.server.services
      .db('webhook_endpoints')
      .where({ id: row.id })
      .update({ url: receiver.url.replace('127.0.0.1', 'localhost') });
    const meta = await world.server.services.webhooks.create(world.workspaceId, { url: 'https://8.8.4.4/hook' });
    await world.server.services.db('webhook_endpoints').where({ id: meta.id }).update({ url: 'http://169.254.169.254/latest/meta-data' });
    await world.emit('email.delivered');
    const [entry] = await until(async () => {
      const log = await world.log(row.id);
      return log.length === 1 && log;
    }, 'the refused attempt logged');
    expect(entry.response_code).toBeNull();
    expect(entry.error).toMatch(/localhost resolves to (127\.0\.0\.1|::1), not a global unicast address/);
    const [metaEntry] = await until(async () => {
      const log = await world.log(meta.id);
      return log.length === 1 && log;
    }, 'the refused metadata attempt logged');
    expect(metaEntry.error).toMatch(/169\.254\.169\.254 resolves to 169\.254\.169\.254/);
    expect(receiver.requests).toHaveLength(0);
  });

  it('does not follow a redirect, keeps 4 KB of an answer, and counts attempts on /metrics', async () => {
    const world = await hookWorld(kind, { roles: ['api', 'webhooks'] });
    const redirect = await startReceiver(() => ({ status: 302, headers: { location: 'http://127.0.0.1:9/elsewhere' } }));
    const chatty = await startReceiver(() => ({ status: 200, body: 'x'.repeat(10_000) }));
    const redirectHook = await world.endpoint(redirect.url);
    const chattyHook = await world.endpoint(chatty.url);
    await world.emit('email.delivered');
    const [redirected] = await until(async () => {
      const log = await world.log(redirectHook.id);
      return log.length === 1 && log;
    }, 'the redirect logged');
    expect([redirected.response_code, redirected.error]).toStrictEqual([302, 'redirect to http://127.0.0.1:9/elsewhere not followed']);
    expect(redirect.requests).toHaveLength(1);
    const [kept] = await until(async () => {
      const log = await world.log(chattyHook.id);
      return log.length === 1 && log;
    }, 'the long answer logged');
    expect([kept.response_code, kept.response_body, kept.error]).toStrictEqual([200, 'x'.repeat(4096), null]);
    const metrics = await (await fetch(`${world.server.url}/metrics`)).text();
    expect(metrics).toContain('mailsvc_webhook_attempts_total{outcome="delivered"} 1');
    expect(metrics).toContain('mailsvc_webhook_attempts_total{outcome="failed"} 1');
    expect(metrics).toContain('mailsvc_webhook_delivery_latency_seconds_count 1');
  });
});
