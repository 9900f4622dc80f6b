import { describe, expect, it } from 'vitest';
import { DeliveryWorker } from '../../src/delivery/worker.ts';
import { pruneRetained } from '../../src/retention/messages.ts';
import { sandboxDelivery } from '../../src/sandbox/index.ts';
import { ManualClock } from '../helpers/clock.ts';
import { STORES } from '../helpers/stores.ts';
import { until } from '../webhooks/world.ts';
import { DOMAIN, sandboxEnv } from './env.ts';

const SIM = 'sandbox.mailsvc.test';

/** Polls the inbox until `n` captures are there, no longer than `ms`; returns them and the time taken. */
async function inboxWithin(read: () => Promise<any[]>, n: number, ms: number): Promise<{ rows: any[]; took: number }> {
  const start = performance.now();
  for (;;) {
    const rows = await read();
    const took = performance.now() - start;
    if (rows.length >= n || took > ms) return { rows, took };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.each(STORES)('sandbox mode (%s)', (kind) => {
  it('captures the exact signed copy with its envelope within 1 s, DKIM pass, without any DNS query or connection', async () => {
    const env = await sandboxEnv(kind, { roles: ['api', 'delivery'] });
    const domain = (await env.server.api('GET', '/domains', { key: env.ws.apiKey })).body.data[0];
    expect(domain).toMatchObject({ name: DOMAIN, status: 'verified' });
    expect(domain.records.every((r: { verified: boolean }) => r.verified)).toBe(true);

    const id = await env.send({ to: 'someone@example.org', subject: 'Sandbox hello' });
    const { rows, took } = await inboxWithin(() => env.inbox(), 1, 5000);
    expect(rows).toHaveLength(1);
    expect(took).toBeLessThan(1000);
    const [row] = rows;
    expect(row).toMatchObject({
      email_id: id,
      recipient: 'someone@example.org',
      subject: 'Sandbox hello',
      outcome: 'delivered',
      dkim: { result: 'pass' },
    });
    expect(row.envelope.rcpt_to).toBe('someone@example.org');
    expect(row.envelope.mail_from).toMatch(/^b\+[a-z0-9]+@bounces\.acme\.test$/);

    const detail = (await env.server.api('GET', `/sandbox/messages/${row.id}`, { key: env.ws.apiKey })).body;
    expect(detail.raw).toMatch(/^DKIM-Signature: /m);
    expect(detail.raw).toMatch(/^Subject: Sandbox hello\r$/m);
    expect(detail.raw).toContain(`Message-ID: ${row.message_id}`);
    expect(detail.size).toBe(Buffer.byteLength(detail.raw));

    // The capture is the delivery's SMTP transaction; its outcome is committed right after it.
    const message = await until(
      async () => {
        const detail = await env.detail(id);
        return detail.status === 'delivered' && detail;
      },
      'the delivered outcome',
      2000,
    );
    expect(message.events.map((e: { event: string }) => e.event)).toEqual(['email.delivered']);
    expect(message.events[0].provider.reporting_mta).toBe(SIM);
    // Nothing left the machine: no MX or key lookup in the DNS, no connection to delivery.port.
    expect(env.dns.queries).toEqual([]);
    expect(env.sink.connections).toEqual([]);
  });

  it('each simulated address yields the events and suppression real mail would', async () => {
    const clock = new ManualClock();
    const env = await sandboxEnv(kind, { clock });
    const worker = new DeliveryWorker(env.server.services, { stopGraceMs: 2000, ...sandboxDelivery(env.server.services) });
    const to = ['delivered', 'bounced', 'deferred', 'complained', 'unsubscribed'].map((l) => `${l}@${SIM}`);
    const id = await env.send({ to });
    expect(await worker.runOnce()).toMatchObject({ claimed: 5, delivered: 3, bounced: 1, deferred: 1 });

    const message = await env.detail(id);
    const events = message.events.map((e: any) => [e.event, e.recipient, e.bounce_type ?? null]);
    expect(events).toEqual(
      expect.arrayContaining([
        ['email.delivered', `delivered@${SIM}`, null],
        ['email.bounced', `bounced@${SIM}`, 'permanent'],
        ['email.delivered', `complained@${SIM}`, null],
        ['email.complained', `complained@${SIM}`, null],
        ['email.delivered', `unsubscribed@${SIM}`, null],
        ['email.unsubscribed', `unsubscribed@${SIM}`, null],
      ]),
    );
    expect(events).toHaveLength(6);
    const complaint = message.events.find((e: any) => e.event === 'email.complained');
    expect(complaint.provider).toMatchObject({ reporting_mta: SIM, feedback_type: 'abuse' });
    const bounce = message.events.find((e: any) => e.event === 'email.bounced');
    expect(bounce.provider).toMatchObject({ smtp_code: 550, status: '5.1.1', reporting_mta: SIM });

    const status = Object.fromEntries(message.recipients.map((r: any) => [r.address, [r.status, r.attempts]]));
    expect(status).toEqual({
      [`delivered@${SIM}`]: ['delivered', 1],
      [`bounced@${SIM}`]: ['bounced', 1],
      [`deferred@${SIM}`]: ['deferred', 1],
      [`complained@${SIM}`]: ['delivered', 1],
      [`unsubscribed@${SIM}`]: ['delivered', 1],
    });

    const suppressions = (await env.server.api('GET', '/suppressions?stream=transactional', { key: env.ws.apiKey })).body.data;
    expect(Object.fromEntries(suppressions.map((s: any) => [s.address, s.reason]))).toEqual({
      [`bounced@${SIM}`]: 'bounce',
      [`complained@${SIM}`]: 'complaint',
      [`unsubscribed@${SIM}`]: 'unsubscribe',
    });

    // A suppressed address is not attempted again: the next message to it is `suppressed`.
    const again = await env.send({ to: `bounced@${SIM}` });
    expect((await env.detail(again)).status).toBe('suppressed');

    // The deferral is retried on the schedule (first retry after 60 s), and captured each time.
    const captures = async () => (await env.inbox()).filter((r) => r.recipient === `deferred@${SIM}`);
    expect(await captures()).toHaveLength(1);
    clock.advance(59_000);
    await worker.runOnce();
    expect(await captures()).toHaveLength(1);
    clock.advance(1_000);
    await worker.runOnce();
    const retried = await captures();
    expect(retried.map((r) => r.outcome)).toEqual(['deferred', 'deferred']);
    expect((await env.detail(id)).recipients.find((r: any) => r.address === `deferred@${SIM}`)).toMatchObject({ status: 'deferred', attempts: 2 });

    // Every copy is in the inbox, each with its own outcome and a DKIM pass.
    const all = await env.inbox('?email_id=' + id);
    expect(all.map((r) => [r.recipient, r.outcome]).sort()).toEqual([...to.map((a) => [a, a.split('@')[0]]), [`deferred@${SIM}`, 'deferred']].sort());
    expect(new Set(all.map((r) => r.dkim.result))).toEqual(new Set(['pass']));
  });

  it('domain verify: *.test records count as published, other domains still go through DNS', async () => {
    const env = await sandboxEnv(kind);
    const added = await env.server.api('POST', '/domains', { key: env.ws.apiKey, body: { name: 'example.com' } });
    const verified = await env.server.api('POST', `/domains/${added.body.id}/verify`, { key: env.ws.apiKey });
    expect(verified.body.status).toBe('pending');
    expect(env.dns.queries.map((q) => q.name)).toContain(`${added.body.selector}._domainkey.example.com`);
    expect(env.dns.queries.some((q) => q.name.endsWith('.test'))).toBe(false);
  });

  it('the inbox is scoped to the key: its workspace, and for a domain-scoped key its domain', async () => {
    const env = await sandboxEnv(kind, { roles: ['api', 'delivery'] });
    const other = await env.server.workspace();
    await env.server
      .api('POST', '/domains', { key: other.apiKey, body: { name: 'other.test' } })
      .then((r) => env.server.api('POST', `/domains/${r.body.id}/verify`, { key: other.apiKey }));
    const second = await env.server.api('POST', '/domains', { key: env.ws.apiKey, body: { name: 'second.test' } });
    await env.server.api('POST', `/domains/${second.body.id}/verify`, { key: env.ws.apiKey });
    const scoped = (await env.server.api('POST', '/api-keys', { key: env.ws.apiKey, body: { name: 'acme only', domain: DOMAIN } })).body.api_key;

    await env.send({ to: 'a@example.org' });
    await env.send({ from: 'news@second.test', to: 'b@example.org' });
    await env.send({ from: 'news@other.test', to: 'c@example.org' }, other.apiKey);
    await inboxWithin(() => env.inbox(), 2, 10_000);
    await inboxWithin(() => env.inbox('', other.apiKey), 1, 10_000);

    expect((await env.inbox()).map((r) => r.recipient).sort()).toEqual(['a@example.org', 'b@example.org']);
    expect((await env.inbox('', scoped)).map((r) => r.recipient)).toEqual(['a@example.org']);
    const foreign = (await env.inbox('', other.apiKey))[0];
    expect(foreign.recipient).toBe('c@example.org');
    const peek = await env.server.api('GET', `/sandbox/messages/${foreign.id}`, { key: env.ws.apiKey });
    expect(peek.status).toBe(404);
    expect(Object.keys(peek.body)).toEqual(['error']);
    const second2 = (await env.inbox()).find((r) => r.recipient === 'b@example.org');
    expect((await env.server.api('GET', `/sandbox/messages/${second2.id}`, { key: scoped })).status).toBe(404);

    // Paginated like every list: newest first, an opaque cursor.
    const ids = (await env.inbox()).map((r) => r.id);
    expect(ids[0]).toBeGreaterThan(ids[1]);
    const page1 = await env.server.api('GET', '/sandbox/messages?limit=1', { key: env.ws.apiKey });
    expect(page1.body.data.map((r: any) => r.id)).toEqual([ids[0]]);
    const page2 = await env.server.api('GET', `/sandbox/messages?limit=1&cursor=${page1.body.next_cursor}`, { key: env.ws.apiKey });
    expect(page2.body).toMatchObject({ data: [{ id: ids[1] }], next_cursor: null });
    expect((await env.server.api('GET', '/sandbox/messages?limit=1000', { key: env.ws.apiKey })).status).toBe(422);
  });

  it('outside sandbox mode the inbox endpoints are 404, behind the same authentication', async () => {
    const env = await sandboxEnv(kind, { mode: 'live' });
    for (const path of ['/sandbox/messages', '/sandbox/messages/1']) {
      const res = await env.server.api('GET', path, { key: env.ws.apiKey });
      expect(res.status).toBe(404);
      expect(res.body.error).toMatch(/sandbox mode/);
      expect((await env.server.api('GET', path)).status).toBe(401);
    }
    // Live mode verifies *.test domains through DNS like any other: nothing is published there.
    const domain = (await env.server.api('GET', '/domains', { key: env.ws.apiKey })).body.data[0];
    expect(domain.status).toBe('pending');
    expect(domain.problems.join('\n')).toMatch(/\.test domains never exist in public DNS: verify them in sandbox mode/);
  });

  it('retention prunes captures with the message bodies', async () => {
    const clock = new ManualClock();
    const env = await sandboxEnv(kind, { clock });
    const worker = new DeliveryWorker(env.server.services, { stopGraceMs: 2000, ...sandboxDelivery(env.server.services) });
    await env.send({ to: 'someone@example.org' });
    await worker.runOnce();
    const { db, config } = env.server.services;
    expect(await pruneRetained(db, clock.now() + 29 * 86_400_000, config.retention.days)).toMatchObject({ sandboxCaptures: 0 });
    expect(await env.inbox()).toHaveLength(1);
    expect(await pruneRetained(db, clock.now() + 31 * 86_400_000, config.retention.days)).toMatchObject({ sandboxCaptures: 1 });
    expect(await env.inbox()).toEqual([]);
  });
});

it('the OpenAPI document lists the sandbox endpoints', async () => {
  const env = await sandboxEnv('sqlite');
  const doc = (await env.server.api('GET', '/openapi.json')).body;
  expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/v1/sandbox/messages', '/api/v1/sandbox/messages/{id}']));
});
