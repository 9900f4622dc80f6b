import { describe, expect, it, vi } from 'vitest';
import type { Clock } from '../../src/core/ports.ts';
import { mostInWindow } from '../helpers/provider-farm.ts';
import { STORES } from '../helpers/stores.ts';
import { addresses, shapingEnv } from './env.ts';

const DOMAINS = ['one.example', 'two.example'];
const bigmail = { name: 'bigmail', address: '127.0.0.2', mxHosts: ['mx.bigmail.test'], domains: DOMAINS };
const SOURCES = [
  { address: '127.0.0.10', ehlo: 'mta10.mailsvc.test' },
  { address: '127.0.0.11', ehlo: 'mta11.mailsvc.test' },
];

/** Real time, moved forward when the test says. */
class ShiftedClock implements Clock {
  offset = 0;
  now = (): number => Date.now() + this.offset;
}

describe.each(STORES)('sending addresses (%s)', (kind) => {
  it('binds each connection to a configured address, greets with its name, and holds the group’s limits per address', async () => {
    const env = await shapingEnv(
      kind,
      [{ ...bigmail, maxConnections: 2, perMinute: { limit: 120, windowMs: 6000 } }],
      { providers: [{ name: 'bigmail', mx: ['bigmail.test'], connections: 1, perMinute: 600 }] },
      { delivery: { sourceAddresses: SOURCES } },
    );
    const ids = await env.send(addresses(40, DOMAINS));
    const worker = env.worker();
    worker.start();
    await env.farm.waitForTotal(40, 30_000);
    const farm = env.farm.provider('bigmail');
    for (const source of SOURCES) {
      const from = farm.accepted.filter((a) => a.clientAddress === source.address);
      // Both addresses carried a share, each under its own limits: one connection, 600 a minute
      // (one message every 101.7 ms, so n messages take (n - 1) × 101.7 ms at the least).
      expect(from.length).toBeGreaterThanOrEqual(10);
      expect(from.every((a) => a.helo === source.ehlo)).toBe(true);
      const times = from.map((a) => a.at);
      expect(Math.max(...times) - Math.min(...times)).toBeGreaterThanOrEqual((from.length - 1) * 95);
      expect(mostInWindow(from, 6000)).toBeLessThanOrEqual(60);
      const connections = farm.connectionList.filter((c) => c.clientAddress === source.address);
      for (const c of connections) {
        const overlapping = connections.filter((o) => o !== c && o.openedAt <= c.openedAt && (o.closedAt === null || o.closedAt > c.openedAt));
        expect(overlapping).toEqual([]);
      }
    }
    expect(farm.accepted.every((a) => SOURCES.some((s) => s.address === a.clientAddress))).toBe(true);
    expect(farm.refused).toEqual([]);
    expect(env.farm.duplicates()).toEqual([]);
    await worker.stop();
    const detail = await env.server.api('GET', `/emails/${ids[0]}`, { key: env.ws.apiKey });
    expect(SOURCES.map((s) => s.address)).toContain(detail.body.recipients[0].source_address);
  }, 60_000);

  it('sends each message from its pool: the domain’s, else the workspace’s, else the stream’s, never from outside it', async () => {
    const three = [...SOURCES, { address: '127.0.0.12', ehlo: 'mta12.mailsvc.test' }];
    const env = await shapingEnv(
      kind,
      [bigmail],
      { providers: [{ name: 'bigmail', mx: ['bigmail.test'], connections: 2 }] },
      {
        delivery: {
          sourceAddresses: three,
          pools: { tx: ['127.0.0.10'], bulk: ['127.0.0.11'], vip: ['127.0.0.12'], shared: ['127.0.0.11', '127.0.0.12'] },
          streamPools: { transactional: 'tx', broadcast: 'bulk' },
        },
      },
    );
    const { services } = env.server;
    // A second workspace with a pool of its own, and in it a domain with another.
    const other = await env.server.sender('pooled', 'pooled.test');
    await services.tenancy.setPool('pooled', 'shared');
    await env.server.verifiedDomain(other.id, 'vip.test');
    await services.domains.update(null, 'vip.test', { pool: 'vip' });
    const send = async (key: string, from: string, to: string, stream?: string) => {
      const res = await env.server.api('POST', '/emails', { key, body: { from, to, subject: 'Hi', text: 'Hello', ...(stream ? { stream } : {}) } });
      expect(res.status).toBe(201);
    };
    await send(env.ws.apiKey, 'news@acme.test', 'tx@one.example');
    await send(env.ws.apiKey, 'news@acme.test', 'bulk@one.example', 'broadcast');
    for (const to of ['w1@two.example', 'w2@two.example', 'w3@two.example', 'w4@two.example']) await send(other.apiKey, 'news@pooled.test', to);
    await send(other.apiKey, 'news@vip.test', 'vip@one.example', 'broadcast');
    const worker = env.worker();
    worker.start();
    await env.farm.waitForTotal(7, 20_000);
    const from = (to: string) => env.farm.provider('bigmail').accepted.find((a) => a.to === to)!;
    expect(from('tx@one.example')).toMatchObject({ clientAddress: '127.0.0.10', helo: 'mta10.mailsvc.test' });
    expect(from('bulk@one.example')).toMatchObject({ clientAddress: '127.0.0.11', helo: 'mta11.mailsvc.test' });
    for (const to of ['w1@two.example', 'w2@two.example', 'w3@two.example', 'w4@two.example']) expect(['127.0.0.11', '127.0.0.12']).toContain(from(to).clientAddress);
    expect(from('vip@one.example')).toMatchObject({ clientAddress: '127.0.0.12', helo: 'mta12.mailsvc.test' });
    for (const a of env.farm.provider('bigmail').accepted) expect(a.helo).toBe(three.find((s) => s.address === a.clientAddress)!.ehlo);
    await worker.stop();
  }, 60_000);

  it('warm-up: exactly each address’s allowance goes to the group on a day, the rest the next UTC day with the reason shown meanwhile', async () => {
    const clock = new ShiftedClock();
    const today = new Date(clock.now()).toISOString().slice(0, 10);
    const env = await shapingEnv(
      kind,
      [bigmail],
      { providers: [{ name: 'bigmail', mx: ['bigmail.test'], connections: 2 }] },
      { delivery: { sourceAddresses: SOURCES, warmup: { '127.0.0.10': { start: today, schedule: [3, 10] }, '127.0.0.11': { start: today, schedule: [2] } } } },
      clock,
    );
    const ids = await env.send(addresses(9, DOMAINS));
    const worker = env.worker();
    worker.start();
    await env.farm.waitForTotal(5, 20_000);
    const farm = env.farm.provider('bigmail');
    // Each of the four waits for the next UTC day (one turned away by a count another took
    // first tries the pool's other address a second later, then waits too).
    await vi.waitFor(
      async () =>
        expect(
          await env.server.services
            .db('recipients')
            .where({ status: 'queued' })
            .whereLike('last_response', '%warm-up%')
            .where('due_at', '>', clock.now() + 60_000),
        ).toHaveLength(4),
      {
        timeout: 20_000,
        interval: 50,
      },
    );
    expect(farm.accepted.filter((a) => a.clientAddress === '127.0.0.10')).toHaveLength(3);
    expect(farm.accepted.filter((a) => a.clientAddress === '127.0.0.11')).toHaveLength(2);
    const waiting = await env.server.services.db('recipients').where({ status: 'queued' }).select('last_response', 'attempts', 'due_at');
    expect(waiting).toHaveLength(4);
    for (const w of waiting) {
      expect(w.last_response).toMatch(/^Not sent yet: warm-up: 127\.0\.0\.1[01] has sent today's [23] to provider:bigmail/);
      expect(w.attempts).toBe(0);
      expect(new Date(Number(w.due_at)).toISOString()).toMatch(/T00:00:00\.000Z$/);
    }

    // The next UTC day: 10 for the first address, 2 for the second; the four left go.
    clock.offset += 86_400_000;
    await env.farm.waitForTotal(9, 20_000);
    expect(env.farm.duplicates()).toEqual([]);
    await worker.stop();
    for (const s of await env.statuses(ids)) expect(s).toEqual({ status: 'delivered', attempts: 1 });
  }, 60_000);
});

describe.each(STORES)('a sending address that fails (%s)', (kind) => {
  it('is taken out of its pool, says so in /metrics, and its recipients go through the pool’s other address with no attempt counted', async () => {
    // 192.0.2.1 (TEST-NET-1) is on no interface here: binding it fails.
    const env = await shapingEnv(
      kind,
      [bigmail],
      { providers: [{ name: 'bigmail', mx: ['bigmail.test'], connections: 2 }] },
      { delivery: { sourceAddresses: [SOURCES[0], { address: '192.0.2.1', ehlo: 'gone.mailsvc.test' }] } },
    );
    const ids = await env.send(addresses(6, DOMAINS));
    const worker = env.worker();
    worker.start();
    await env.farm.waitForTotal(6, 20_000);
    expect(env.farm.provider('bigmail').accepted.every((a) => a.clientAddress === '127.0.0.10')).toBe(true);
    const metrics = await (await fetch(`${env.server.url}/metrics`)).text();
    expect(metrics).toMatch(/mailsvc_delivery_source_address_out_until_seconds\{address="192\.0\.2\.1"\} \d+/);
    await worker.stop();
    for (const s of await env.statuses(ids)) expect(s).toEqual({ status: 'delivered', attempts: 1 });
  }, 60_000);
});
