import { describe, expect, it } from 'vitest';
import { recordEvents, type EventName, type NewEvent } from '../../src/events/record.ts';
import { sampleReputation } from '../../src/roles/delivery.ts';
import { oneJson, runCli } from '../helpers/cli.ts';
import { ManualClock } from '../helpers/clock.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { STORES } from '../helpers/stores.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NOW = '2026-11-21T10:00:00.000Z';

/** A message sent through the API from `domain` on `stream`; returns its id. */
async function send(server: TestServer, key: string, domain: string, stream: 'transactional' | 'broadcast'): Promise<number> {
  const res = await server.api('POST', '/emails', { key, body: { from: `news@${domain}`, to: 'someone@example.org', subject: 's', text: 't', stream } });
  expect(res.status).toBe(201);
  return Number(res.body.id);
}

/** `count` events of one name about a message, `at` the first, a second apart. */
async function seed(server: TestServer, workspaceId: number, emailId: number, event: EventName, count: number, at: number): Promise<void> {
  const events: NewEvent[] = Array.from({ length: count }, (_, i) => ({
    workspaceId,
    emailId,
    recipientId: null,
    event,
    recipient: `r${i}@example.org`,
    at: at + i * 1000,
    provider: { response: '250 ok', reporting_mta: 'mx.example.org' },
  }));
  // SQLite takes at most 500 rows in one multi-row insert.
  for (let i = 0; i < events.length; i += 400) await server.services.db.transaction((tx) => recordEvents(tx, events.slice(i, i + 400)));
}

const statusOf = async (server: TestServer, key: string, id: number) => (await server.api('GET', `/emails/${id}`, { key })).body.recipients[0].status as string;

describe.each(STORES)('complaint rate (%s)', (kind) => {
  it('counts complaints ÷ delivered over exactly the last 7 days per workspace, domain and stream, as a hand count does', async () => {
    const clock = new ManualClock(NOW);
    const server = await startTestServer(kind, { clock });
    const { id: workspaceId, apiKey } = await server.sender('rates', 'a.test');
    await server.verifiedDomain(workspaceId, 'b.test');
    const aBroadcast = await send(server, apiKey, 'a.test', 'broadcast');
    const aTransactional = await send(server, apiKey, 'a.test', 'transactional');
    const bBroadcast = await send(server, apiKey, 'b.test', 'broadcast');
    const now = clock.now();
    const edge = now - 7 * DAY; // the window's first millisecond: counted
    // a.test broadcast: 500 deliveries and 3 complaints just outside, then 1000 delivered and 2
    // complaints inside (oldest first: an event's time is bumped past the latest of its kind).
    await seed(server, workspaceId, aBroadcast, 'email.delivered', 500, edge - 600_000);
    await seed(server, workspaceId, aBroadcast, 'email.complained', 3, edge - 10_000);
    await seed(server, workspaceId, aBroadcast, 'email.delivered', 1000, edge);
    await seed(server, workspaceId, aBroadcast, 'email.complained', 2, now - HOUR);
    // a.test transactional: 400 delivered, no complaint. b.test broadcast: 300 delivered, 1 complaint.
    await seed(server, workspaceId, aTransactional, 'email.delivered', 400, now - DAY);
    await seed(server, workspaceId, bBroadcast, 'email.delivered', 300, now - 2 * DAY);
    await seed(server, workspaceId, bBroadcast, 'email.complained', 1, now - 2 * DAY);
    // Events not yet happened by the clock (a report time in the future) are not counted either.
    await seed(server, workspaceId, bBroadcast, 'email.complained', 1, now + HOUR);

    const res = await server.api('GET', '/stats/reputation', { key: apiKey });
    expect(res.status).toBe(200);
    expect(res.body.from).toBe('2026-11-14T10:00:00.000Z');
    expect(res.body.to).toBe(NOW);
    expect(res.body.thresholds).toStrictEqual({ warning: 0.1, critical: 0.3, pause_broadcast_at: 0.3 });
    expect(res.body.domains).toStrictEqual([
      { domain: 'a.test', stream: 'broadcast', delivered: 1000, complained: 2, rate: 0.2, level: 'warning', held: false },
      { domain: 'a.test', stream: 'transactional', delivered: 400, complained: 0, rate: 0, level: 'ok' },
      { domain: 'b.test', stream: 'broadcast', delivered: 300, complained: 1, rate: 0.3333, level: 'critical', held: false },
    ]);
    expect(res.body.workspace).toStrictEqual({
      delivered: 1700,
      complained: 3,
      rate: 0.1765,
      level: 'warning',
      streams: [
        { stream: 'transactional', delivered: 400, complained: 0, rate: 0, level: 'ok' },
        { stream: 'broadcast', delivered: 1300, complained: 3, rate: 0.2308, level: 'warning' },
      ],
    });

    // A domain-scoped key sees its domain only; another workspace sees nothing.
    const scoped = await server.services.tenancy.createKey(workspaceId, { domain: 'b.test' });
    const mine = await server.api('GET', '/stats/reputation', { key: scoped.secret });
    expect(mine.body.domains.map((d: { domain: string }) => d.domain)).toStrictEqual(['b.test']);
    expect(mine.body.workspace).toMatchObject({ delivered: 300, complained: 1 });
    const other = await server.workspace();
    const none = await server.api('GET', '/stats/reputation', { key: other.apiKey });
    expect(none.body.domains).toStrictEqual([]);
    expect(none.body.workspace).toMatchObject({ delivered: 0, complained: 0, rate: null, level: 'ok' });

    // The same figures on /metrics, per workspace, domain and stream.
    await sampleReputation(server.services);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain('mailsvc_complaint_rate_percent{workspace="rates",domain="a.test",stream="broadcast"} 0.2');
    expect(metrics).toContain('mailsvc_complaint_rate_percent{workspace="rates",domain="b.test",stream="broadcast"} 0.3333');
    expect(metrics).toContain('mailsvc_complaint_rate_percent{workspace="rates",domain="a.test",stream="transactional"} 0');

    // A day later the 1000 deliveries at the window's edge have left it.
    clock.advance(DAY);
    const later = await server.api('GET', '/stats/reputation', { key: apiKey });
    expect(later.body.domains[0]).toMatchObject({ domain: 'a.test', stream: 'broadcast', delivered: 0, complained: 2, rate: null });
  });

  it("holds a domain's broadcast stream at compliance.pauseBroadcastAt, not below it or below the minimum, until an operator releases it", async () => {
    const clock = new ManualClock(NOW);
    const server = await startTestServer(kind, { clock, config: { compliance: { pauseBroadcastAt: 0.3, pauseMinDelivered: 500 } } });
    const { id: workspaceId, apiKey } = await server.sender('pause', 'hot.test');
    for (const d of ['warm.test', 'small.test']) await server.verifiedDomain(workspaceId, d);
    const hot = await send(server, apiKey, 'hot.test', 'broadcast');
    const hotTransactional = await send(server, apiKey, 'hot.test', 'transactional');
    const warm = await send(server, apiKey, 'warm.test', 'broadcast');
    const small = await send(server, apiKey, 'small.test', 'broadcast');
    const t = clock.now() - DAY;
    // hot.test: 3 of 1000 = 0.3%, at the threshold. warm.test: 2 of 1000 = 0.2%, below it.
    // small.test: 1 of 10 = 10%, far above it, but 10 delivered is under the minimum of 500.
    await seed(server, workspaceId, hot, 'email.delivered', 1000, t);
    await seed(server, workspaceId, hot, 'email.complained', 3, t);
    await seed(server, workspaceId, hotTransactional, 'email.delivered', 1000, t);
    await seed(server, workspaceId, hotTransactional, 'email.complained', 30, t);
    await seed(server, workspaceId, warm, 'email.delivered', 1000, t);
    await seed(server, workspaceId, warm, 'email.complained', 2, t);
    await seed(server, workspaceId, small, 'email.delivered', 10, t);
    await seed(server, workspaceId, small, 'email.complained', 1, t);

    const first = await server.services.reputation.check();
    expect(first.held).toStrictEqual([{ workspaceId, domain: 'hot.test' }]);
    expect(await statusOf(server, apiKey, hot)).toBe('held');
    expect(await statusOf(server, apiKey, hotTransactional)).toBe('queued');
    expect(await statusOf(server, apiKey, warm)).toBe('queued');
    expect(await statusOf(server, apiKey, small)).toBe('queued');
    // Broadcast mail accepted later waits as well (the claim skips it, the sweep marks it held).
    const later = await send(server, apiKey, 'hot.test', 'broadcast');
    const stats = await server.api('GET', '/stats/queue', { key: apiKey });
    expect(stats.body.held).toBe(1);
    expect(
      (await server.api('GET', '/stats/reputation', { key: apiKey })).body.domains.find(
        (d: { domain: string; stream: string }) => d.domain === 'hot.test' && d.stream === 'broadcast',
      ),
    ).toMatchObject({ held: true, level: 'critical' });

    // Several checks at once hold it once.
    const again = await Promise.all([server.services.reputation.check(), server.services.reputation.check()]);
    expect(again.flatMap((r) => r.held)).toStrictEqual([]);
    expect(Number((await server.services.db('queue_holds').count({ n: '*' }).first())!.n)).toBe(1);

    // The operator releases it: the held mail is due again, and the next checks do not hold it again.
    const cli = (...args: string[]) => runCli(['--config', server.configFile, ...args]);
    const released = await cli('queue', 'release', '--workspace', 'pause', '--sending-domain', 'hot.test', '--stream', 'broadcast', '--json');
    expect(released.code, released.stderr).toBe(0);
    expect(oneJson(released)).toStrictEqual({ affected: 1 });
    expect(await statusOf(server, apiKey, hot)).toBe('queued');
    expect((await server.services.reputation.check()).held).toStrictEqual([]);
    clock.advance(DAY - 60_000);
    expect((await server.services.reputation.check()).held).toStrictEqual([]);
    expect(await statusOf(server, apiKey, hot)).toBe('queued');
    expect(await statusOf(server, apiKey, later)).toBe('queued');
    // A day after the release was noticed, a rate still at the threshold holds it again.
    clock.advance(60_000);
    expect((await server.services.reputation.check()).held).toStrictEqual([{ workspaceId, domain: 'hot.test' }]);
    expect(await statusOf(server, apiKey, hot)).toBe('held');
    expect(await statusOf(server, apiKey, hotTransactional)).toBe('queued');
  });

  it('never holds with compliance.pauseBroadcastAt null', async () => {
    const clock = new ManualClock(NOW);
    const server = await startTestServer(kind, { clock, config: { compliance: { pauseBroadcastAt: null, pauseMinDelivered: 1 } } });
    const { id: workspaceId, apiKey } = await server.sender('off', 'hot.test');
    const hot = await send(server, apiKey, 'hot.test', 'broadcast');
    await seed(server, workspaceId, hot, 'email.delivered', 10, clock.now() - HOUR);
    await seed(server, workspaceId, hot, 'email.complained', 5, clock.now() - HOUR);
    const { figures, held } = await server.services.reputation.check();
    expect(held).toStrictEqual([]);
    expect(figures).toMatchObject([{ domain: 'hot.test', stream: 'broadcast', rate: 50, level: 'critical' }]);
    expect(await statusOf(server, apiKey, hot)).toBe('queued');
  });
});
