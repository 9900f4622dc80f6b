import { describe, expect, it } from 'vitest';
import { independentHosts } from '../helpers/provider-farm.ts';
import { STORES } from '../helpers/stores.ts';
import { addresses, shapingEnv } from './env.ts';

const DOMAINS = ['one.example', 'two.example'];
const provider = { name: 'bigmail', address: '127.0.0.2', mxHosts: ['mx.bigmail.test'], domains: DOMAINS };

/** Gaps between consecutive accepted messages, in ms. */
function gaps(times: number[]): number[] {
  return times.slice(1).map((t, i) => t - times[i]!);
}

describe.each(STORES)('reply-driven actions (%s)', (kind) => {
  it('throttle: the group goes on at half its rate and on half its connections until the rule’s time is up', async () => {
    const env = await shapingEnv(kind, [{ ...provider, block: { afterMessages: 4, reply: '421 4.7.0 Please slow down', forMs: 150 } }], {
      providers: [{ name: 'bigmail', mx: ['bigmail.test'], connections: 2, perMinute: 600 }],
      rules: [{ match: 'slow down', action: 'throttle', seconds: 3 }],
    });
    const ids = await env.send(addresses(24, DOMAINS));
    const worker = env.worker();
    worker.start();
    const farm = env.farm.provider('bigmail');
    await env.farm.waitForTotal(24, 30_000);
    const throttledAt = farm.refused[0]!.at;
    const during = farm.accepted.filter((a) => a.at > throttledAt + 300 && a.at < throttledAt + 2900).map((a) => a.at);
    // 600 a minute is one every 101.7 ms; halved, one every 203.3 ms: about 13 in those 2.6 s, not 25.
    expect(during.length).toBeGreaterThanOrEqual(5);
    expect(during.length).toBeLessThanOrEqual(14);
    // Half of two connections: no two open at once while throttled (counted from the receiver's side).
    const overlapping = farm.connectionList.filter((c) => c.refused === null && c.openedAt > throttledAt + 300 && c.openedAt < throttledAt + 2900);
    for (const c of overlapping) {
      const others = farm.connectionList.filter((o) => o !== c && o.refused === null && o.openedAt < c.openedAt && (o.closedAt === null || o.closedAt > c.openedAt));
      expect(others).toEqual([]);
    }
    const after = farm.accepted.filter((a) => a.at > throttledAt + 3300).map((a) => a.at);
    if (after.length > 2) expect(Math.min(...gaps(after))).toBeLessThan(190);
    // Only transactions already under way when the reply came met the block (one per connection).
    expect(farm.refused.length).toBeLessThanOrEqual(2);
    await worker.stop();
    for (const s of await env.statuses(ids)) expect(s).toEqual({ status: 'delivered', attempts: 1 });
  }, 60_000);

  it('reconnect-later: the connection is closed, that recipient waits, the group goes on, no attempt is counted', async () => {
    const env = await shapingEnv(kind, [{ ...provider, block: { afterMessages: 2, reply: '451 4.3.2 Too busy, reconnect later', forMs: 50 } }, ...independentHosts(1)], {
      providers: [{ name: 'bigmail', mx: ['bigmail.test'], connections: 1 }],
      rules: [{ match: 'reconnect later', action: 'reconnect-later', seconds: 2 }],
    });
    const ids = await env.send(addresses(12, DOMAINS));
    const worker = env.worker();
    worker.start();
    const farm = env.farm.provider('bigmail');
    await env.farm.waitForTotal(12, 30_000);
    const first = farm.refused[0]!;
    for (const refusal of farm.refused) {
      // The connection the reply came on was closed, and that recipient came back after the rule's 2 s.
      expect(farm.connectionList.find((c) => c.id === refusal.connectionId)!.closedAt).not.toBeNull();
      expect(farm.accepted.find((a) => a.to === refusal.to)!.at - refusal.at).toBeGreaterThanOrEqual(1900);
    }
    // The group went on over a new connection without waiting.
    const refusedTo = new Set(farm.refused.map((r) => r.to));
    const next = farm.accepted.find((a) => a.at > first.at && !refusedTo.has(a.to))!;
    expect(next.connectionId).not.toBe(first.connectionId);
    expect(next.at - first.at).toBeLessThan(1000);
    await worker.stop();
    for (const s of await env.statuses(ids)) expect(s).toEqual({ status: 'delivered', attempts: 1 });
  }, 60_000);
});
