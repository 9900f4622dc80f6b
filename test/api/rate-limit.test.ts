import { describe, expect, it } from 'vitest';
import { ManualClock } from '../helpers/clock.ts';
import { STORES } from '../helpers/stores.ts';
import { startTestServer } from '../helpers/server.ts';

describe.each(STORES)('rate limits per API key (%s)', (kind) => {
  it('refuses the 61st request in a minute with Retry-After, and leaves another key alone', async () => {
    const clock = new ManualClock('2026-11-21T10:00:00.000Z');
    const server = await startTestServer(kind, { clock });
    const { id, apiKey } = await server.workspace();
    const other = (await server.services.tenancy.createKey(id, { name: 'second' })).secret;

    for (let i = 0; i < 60; i++) {
      const res = await server.api('GET', '/domains', { key: apiKey });
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-remaining')).toBe(String(59 - i));
      clock.advance(500);
    }
    const refused = await server.api('GET', '/domains', { key: apiKey });
    expect(refused.status).toBe(429);
    expect(refused.body).toStrictEqual({ error: 'Rate limit exceeded: 60 requests per minute' });
    expect(refused.headers.get('ratelimit-limit')).toBe('60');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    // The first request (t=0) leaves the window at t=60 s; we are at t=30 s.
    expect(refused.headers.get('retry-after')).toBe('30');

    expect((await server.api('GET', '/domains', { key: other })).status).toBe(200);

    clock.advance(30_000);
    expect((await server.api('GET', '/domains', { key: apiKey })).status).toBe(200);
  });

  it('uses sliding windows: 60 just before a minute boundary and 1 just after is still refused', async () => {
    const clock = new ManualClock('2026-11-21T10:00:59.000Z');
    const server = await startTestServer(kind, { clock });
    const { apiKey } = await server.workspace();
    for (let i = 0; i < 60; i++) {
      expect((await server.api('GET', '/domains', { key: apiKey })).status).toBe(200);
    }
    clock.set('2026-11-21T10:01:00.100Z');
    const res = await server.api('GET', '/domains', { key: apiKey });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(59);
  });

  it('refuses the 1001st request in an hour once the per-minute limit is raised', async () => {
    const clock = new ManualClock('2026-11-21T10:00:00.000Z');
    const server = await startTestServer(kind, { clock });
    const { apiKey } = await server.workspace('hourly');
    await server.services.tenancy.setLimits('hourly', { perMinute: 5000 });
    // A refused request does not count, so 1000 accepted requests exhaust the hour.
    for (let i = 0; i < 1000; i++) {
      const res = await server.api('GET', '/api-keys', { key: apiKey });
      if (res.status !== 200) throw new Error(`request ${i + 1} got ${res.status}`);
      clock.advance(3000);
    }
    const res = await server.api('GET', '/api-keys', { key: apiKey });
    expect(res.status).toBe(429);
    expect(res.body).toStrictEqual({ error: 'Rate limit exceeded: 1000 requests per hour' });
    expect(res.headers.get('retry-after')).toBe('600');
  });
});
