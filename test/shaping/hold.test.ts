import { describe, expect, it, vi } from 'vitest';
import type { Clock } from '../../src/core/ports.ts';
import { STORES } from '../helpers/stores.ts';
import { addresses, shapingEnv } from './env.ts';

/** Real time, moved forward when the test says: pacing waits in real milliseconds while "an hour" passes at once. */
class ShiftedClock implements Clock {
  offset = 0;
  now = (): number => Date.now() + this.offset;
}

const DOMAINS = ['held.example', 'other.example'];

describe.each(STORES)('a held domain released an hour later (%s)', (kind) => {
  it('delivers everything at once within its group’s limits, none of it aged by the hold', async () => {
    const clock = new ShiftedClock();
    const env = await shapingEnv(
      kind,
      [{ name: 'bigmail', address: '127.0.0.2', mxHosts: ['mx.bigmail.test'], domains: DOMAINS, maxConnections: 2, perMinute: { limit: 60, windowMs: 6000 } }],
      { providers: [{ name: 'bigmail', mx: ['bigmail.test'], connections: 2, perMinute: 600 }] },
      // Held for an hour with a 30 minutes' maximum age: only a hold that stops the clock keeps it.
      { delivery: { port: 0, maxAge: 1800, signingThreads: 0 } },
      clock,
    );
    const control = (action: string, body: unknown) => env.server.api('POST', `/queue/${action}`, { key: env.ws.apiKey, body });
    const first = await env.send(addresses(20, ['held.example']));
    expect((await control('hold', { domain: 'held.example' })).body).toStrictEqual({ affected: 20 });
    const later = await env.send(addresses(10, ['held.example'], 'later'));
    const free = await env.send(addresses(5, ['other.example']));
    const worker = env.worker();
    worker.start();
    await env.farm.waitForTotal(5, 20_000);
    const farm = env.farm.provider('bigmail');
    expect(farm.accepted.every((a) => a.to.endsWith('@other.example'))).toBe(true);

    clock.offset += 3_600_000;
    expect((await control('release', { domain: 'held.example' })).body).toStrictEqual({ affected: 30 });
    const releasedAt = Date.now();
    await env.farm.waitForTotal(35, 30_000);
    // At once: the 30 went at the group's pace (one every 101.7 ms), starting right after the release.
    const held = farm.accepted.filter((a) => a.to.endsWith('@held.example')).map((a) => a.at);
    expect(Math.min(...held) - releasedAt).toBeLessThan(1500);
    expect(Math.max(...held) - releasedAt).toBeLessThan(6000);
    expect(farm.connectionsPeak).toBeLessThanOrEqual(2);
    expect(farm.refused).toEqual([]);
    expect(env.farm.duplicates()).toEqual([]);
    await worker.stop();
    for (const s of await env.statuses([...first, ...later, ...free])) expect(s).toEqual({ status: 'delivered', attempts: 1 });
  }, 60_000);
});

describe.each(STORES)('a group held before any of its domains was resolved (%s)', (kind) => {
  it('holds the first mail to a new domain of the group too, once its MX names the group', async () => {
    const env = await shapingEnv(kind, [{ name: 'bigmail', address: '127.0.0.2', mxHosts: ['mx.bigmail.test'], domains: DOMAINS }], {
      providers: [{ name: 'bigmail', mx: ['bigmail.test'] }],
    });
    const control = (action: string, body: unknown) => env.server.api('POST', `/queue/${action}`, { key: env.ws.apiKey, body });
    expect((await control('hold', { group: 'provider:bigmail' })).body).toStrictEqual({ affected: 0 });
    const ids = await env.send(addresses(3, DOMAINS));
    const worker = env.worker();
    worker.start();
    await vi.waitFor(async () => expect((await env.statuses(ids)).map((s) => s.status)).toStrictEqual(['held', 'held', 'held']), { timeout: 20_000, interval: 100 });
    expect(env.farm.totalAccepted()).toBe(0);
    expect((await control('release', { group: 'provider:bigmail' })).body).toStrictEqual({ affected: 3 });
    await env.farm.waitForTotal(3, 20_000);
    await worker.stop();
    for (const s of await env.statuses(ids)) expect(s).toEqual({ status: 'delivered', attempts: 1 });
  }, 60_000);
});
