import { describe, expect, it } from 'vitest';
import { independentHosts } from '../helpers/provider-farm.ts';
import { STORES } from '../helpers/stores.ts';
import { addresses, shapingEnv } from './env.ts';

const BIG_DOMAINS = Array.from({ length: 8 }, (_, i) => `customer${i}.example`);

/**
 * A provider that enforces what we promise it: 2 connections, 600 messages a minute counted over
 * any sliding tenth of a minute (60 in 6 s), and says so with a 421 beyond.
 */
const bigmail = {
  name: 'bigmail',
  address: '127.0.0.2',
  mxHosts: ['mx1.bigmail.test', 'mx2.bigmail.test'],
  domains: BIG_DOMAINS,
  maxConnections: 2,
  perMinute: { limit: 60, windowMs: 6000 },
};

// The server paces 600 a minute: one message every 101.7 ms (a minute and a second's worth, docs/SHAPING.md).
const shaping = {
  defaults: { connections: 3 },
  providers: [{ name: 'bigmail', mx: ['bigmail.test'], connections: 2, perMinute: 600, perConnection: 5 }],
};

describe.each(STORES)('shaping limits at the receiver (%s)', (kind) => {
  it('never exceeds a group’s connections, rate or messages per connection, while other groups flow, and delivers each message once', async () => {
    const env = await shapingEnv(kind, [bigmail, ...independentHosts(3, { maxConnections: 3 })], shaping);
    const big = await env.send(addresses(70, BIG_DOMAINS));
    const small = await env.send(addresses(30, ['host1.test', 'host2.test', 'host3.test'], 'other'));
    const worker = env.worker();
    worker.start();
    await env.farm.waitForTotal(100, 30_000);

    const provider = env.farm.provider('bigmail');
    // 8 recipient domains, 2 MX hosts: one group, so two connections in all.
    expect(provider.connectionsPeak).toBeLessThanOrEqual(2);
    expect(provider.messagesPerConnectionPeak).toBeLessThanOrEqual(5);
    // Its rate is held if it refused nothing: it counts each recipient at RCPT against 60 in any 6 s
    // and refuses beyond (checked below with the other providers').
    expect(provider.accepted.length).toBe(70);
    for (const host of ['host1', 'host2', 'host3']) expect(env.farm.provider(host).connectionsPeak).toBeLessThanOrEqual(3);
    for (const p of env.farm.providers()) expect(p.refused).toEqual([]);
    expect(env.farm.duplicates()).toEqual([]);

    // The independent hosts were not held up behind the paced provider: all theirs arrived while
    // bigmail, paced by the clock, still had two of its 7 seconds to go. Measured from bigmail's
    // last message rather than its first, because a busy machine slows the other hosts' deliveries
    // but not bigmail's pace (they took 2.5 s on a loaded machine, 3.9 s beside a CI run's others).
    const lastSmall = Math.max(...['host1', 'host2', 'host3'].flatMap((h) => env.farm.provider(h).accepted.map((a) => a.at)));
    const bigTimes = provider.accepted.map((a) => a.at);
    expect(Math.max(...bigTimes) - Math.min(...bigTimes)).toBeGreaterThanOrEqual(69 * 100);
    expect(lastSmall).toBeLessThan(Math.max(...bigTimes) - 2000);

    await worker.stop();
    for (const s of await env.statuses([...big, ...small])) expect(s).toEqual({ status: 'delivered', attempts: 1 });
  }, 60_000);

  it('pauses the whole group on a throttling reply within a second, resumes when the rule says, and counts no attempt', async () => {
    const blocking = {
      ...bigmail,
      perMinute: undefined,
      maxConnections: 2,
      block: { afterMessages: 5, reply: '421 4.7.28 Unusual rate of unsolicited mail, try later', forMs: 500 },
    };
    const env = await shapingEnv(kind, [blocking, ...independentHosts(1)], {
      ...shaping,
      providers: [{ name: 'bigmail', mx: ['bigmail.test'], connections: 2 }],
      rules: [{ match: '4.7.28', action: 'suspend', seconds: 2 }],
    });
    const big = await env.send(addresses(20, BIG_DOMAINS));
    const worker = env.worker();
    worker.start();
    const provider = env.farm.provider('bigmail');
    await env.farm.waitFor(() => provider.refused.length > 0, 'the first 421');
    const blockedAt = provider.refused[0]!.at;
    // Mail to another group, sent while bigmail is suspended, goes at once.
    const small = await env.send(addresses(5, ['host1.test'], 'other'));
    await env.farm.waitFor(() => env.farm.provider('host1').accepted.length === 5, 'the other group');
    expect(Math.max(...env.farm.provider('host1').accepted.map((a) => a.at))).toBeLessThan(blockedAt + 2000);

    await env.farm.waitForTotal(25, 30_000);
    // Only what was already on its way when the reply came met the block; nothing new was tried for 2 s.
    expect(provider.refused.every((r) => r.at < blockedAt + 1000)).toBe(true);
    const quiet = provider.accepted.filter((a) => a.at > blockedAt + 100 && a.at < blockedAt + 1900);
    expect(quiet).toEqual([]);
    expect(provider.accepted.filter((a) => a.at >= blockedAt + 1900).length).toBeGreaterThanOrEqual(14);
    expect(env.farm.duplicates()).toEqual([]);

    const metrics = await (await fetch(`${env.server.url}/metrics`)).text();
    expect(metrics).toMatch(/mailsvc_shaping_replies_total\{group="provider:bigmail",action="suspend"\} [1-9]/);

    await worker.stop();
    // The 421 cost no attempt: every recipient was delivered at its first counted attempt.
    for (const s of await env.statuses([...big, ...small])) expect(s).toEqual({ status: 'delivered', attempts: 1 });
  }, 60_000);
});
