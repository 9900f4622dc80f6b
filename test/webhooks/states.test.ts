import { describe, expect, it } from 'vitest';
import { ManualClock } from '../helpers/clock.ts';
import { STORES } from '../helpers/stores.ts';
import { startReceiver, type Received } from './receiver.ts';
import { hookWorld, until } from './world.ts';

const events = (reqs: Received[]) => reqs.map((r) => JSON.parse(r.raw.toString()).event as string);

describe.each(STORES)('webhook endpoint states (%s)', (kind) => {
  it('pauses an always-failing endpoint, disables it once its last success is too old, skips its events, and PATCH active plus replay delivers them; another endpoint keeps receiving', async () => {
    const clock = new ManualClock();
    const world = await hookWorld(kind, {
      clock,
      roles: ['api', 'webhooks'],
      webhooks: { pauseAfter: 3, retrySchedule: [10, 10, 10, 10, 10, 10], probeInterval: 60, disableAfter: 600 },
    });
    const { server } = world;
    const key = (await server.services.tenancy.createKey(world.workspaceId, { name: 'k' })).secret;
    let failing = true;
    const dead = await startReceiver(() => (failing ? { status: 500, body: 'down' } : { status: 200 }));
    const healthy = await startReceiver();
    const deadHook = await world.endpoint(dead.url);
    await world.endpoint(healthy.url);
    const show = async () => (await server.api('GET', `/webhooks/${deadHook.id}`, { key })).body;

    await world.emit('email.delivered');
    await world.emit('email.opened');
    await world.emit('email.clicked');
    await healthy.waitFor(3, 2_000);
    await dead.waitFor(3);
    const paused = await until(async () => {
      const ep = await show();
      return ep.status === 'paused' && ep;
    }, 'the endpoint paused');
    expect(paused.failure_count).toBe(3);

    // Paused: nothing but the probe, when it is due; the other endpoint is not held up.
    await world.emit('email.complained');
    await healthy.waitFor(4, 2_000);
    expect(dead.requests).toHaveLength(3);
    clock.advance(60_000);
    const probes = await dead.waitFor(4);
    expect(events([probes[3]])).toStrictEqual(['email.delivered']);
    await until(async () => (await show()).failure_count === 4 && true, 'the failed probe counted');
    expect((await show()).status).toBe('paused');

    // Ten minutes without a success: the next failed probe disables it and skips its backlog.
    clock.advance(600_000);
    await dead.waitFor(5);
    const disabled = await until(async () => {
      const ep = await show();
      return ep.status === 'disabled' && ep;
    }, 'the endpoint disabled');
    expect(disabled.failure_count).toBe(5);
    await world.emit('email.unsubscribed');
    await healthy.waitFor(5, 2_000);
    clock.advance(3_600_000);
    await world.emit('email.delivered');
    await healthy.waitFor(6, 2_000);
    expect(dead.requests).toHaveLength(5);
    const statuses = await server.services.db('webhook_deliveries').where({ endpoint_id: deadHook.id }).orderBy('id').pluck('status');
    expect(statuses).toStrictEqual(['skipped', 'skipped', 'skipped', 'skipped', 'skipped', 'skipped']);
    const skippedLog = (await server.api('GET', `/webhooks/${deadHook.id}/deliveries`, { key })).body.data;
    expect(skippedLog.slice(0, 6).map((e: any) => [e.event, e.attempt, e.response_code, e.error])).toStrictEqual([
      ['email.delivered', 0, null, 'skipped: the endpoint is disabled'],
      ['email.unsubscribed', 0, null, 'skipped: the endpoint is disabled'],
      ['email.complained', 0, null, 'skipped: the endpoint is disabled'],
      ['email.clicked', 1, null, 'skipped: the endpoint is disabled'],
      ['email.opened', 1, null, 'skipped: the endpoint is disabled'],
      ['email.delivered', 3, null, 'skipped: the endpoint is disabled'],
    ]);

    failing = false;
    const reactivated = await server.api('PATCH', `/webhooks/${deadHook.id}`, { key, body: { status: 'active' } });
    expect([reactivated.body.status, reactivated.body.failure_count]).toStrictEqual(['active', 0]);
    const replay = await server.api('POST', `/webhooks/${deadHook.id}/replay`, { key, body: { since: '2026-01-01T00:00:00Z' } });
    expect(replay.body).toStrictEqual({ id: deadHook.id, queued: 6 });
    const all = await dead.waitFor(11);
    expect(events(all.slice(5))).toStrictEqual(['email.delivered', 'email.opened', 'email.clicked', 'email.complained', 'email.unsubscribed', 'email.delivered']);
    expect(events(healthy.requests)).toStrictEqual(events(all.slice(5)));
    const ep = await until(async () => {
      const e = await show();
      return e.last_success_at !== null && e;
    }, 'a success recorded');
    expect([ep.status, ep.failure_count, ep.last_success_at]).toStrictEqual(['active', 0, new Date(clock.now()).toISOString()]);
    await until(async () => (await world.log(deadHook.id)).length === 11 + 6 && true, 'every attempt logged');
    const log = (await server.api('GET', `/webhooks/${deadHook.id}/deliveries?limit=5`, { key })).body;
    expect(log.data).toHaveLength(5);
    expect(log.next_cursor).toEqual(expect.any(String));
    const older = (await server.api('GET', `/webhooks/${deadHook.id}/deliveries?limit=100&cursor=${log.next_cursor}`, { key })).body;
    expect(older.next_cursor).toBeNull();
    const ids = [...log.data, ...older.data].map((e: { id: number }) => e.id);
    expect(ids).toStrictEqual([...ids].sort((x, y) => y - x));
    expect(ids).toHaveLength(17);
    expect(older.data.at(-1)).toMatchObject({ attempt: 1, response_code: 500, response_body: 'down', error: 'HTTP 500', event: 'email.delivered' });
  });

  it('returns a paused endpoint whose probe succeeds to active and sends its backlog in order', async () => {
    const clock = new ManualClock();
    const world = await hookWorld(kind, { clock, webhooks: { pauseAfter: 2, retrySchedule: [10, 10], probeInterval: 300 } });
    let failing = true;
    const receiver = await startReceiver(() => (failing ? { status: 502 } : { status: 204 }));
    const hook = await world.endpoint(receiver.url);
    await world.emit('email.delivered');
    await world.emit('email.opened');
    await receiver.waitFor(2);
    await until(async () => (await world.endpointRow(hook.id)).status === 'paused', 'paused');
    await world.emit('email.clicked');
    await world.emit('email.complained');
    await world.emit('email.unsubscribed');
    failing = false;
    clock.advance(300_000);
    const got = await receiver.waitFor(7);
    expect(events(got)).toStrictEqual(['email.delivered', 'email.opened', 'email.delivered', 'email.opened', 'email.clicked', 'email.complained', 'email.unsubscribed']);
    const ep = await until(async () => {
      const row = await world.endpointRow(hook.id);
      return (await world.log(hook.id)).length === 7 && row;
    }, 'all attempts logged');
    expect([ep.status, ep.failure_count]).toStrictEqual(['active', 0]);
  });
});
