import { describe, expect, it } from 'vitest';
import { queueRepo } from '../../src/store/queue.ts';
import { queueControlRepo } from '../../src/store/queue-control.ts';
import { ManualClock } from '../helpers/clock.ts';
import { startTestServer } from '../helpers/server.ts';
import { STORES, type StoreKind } from '../helpers/stores.ts';

const AT = Date.parse('2026-03-02T10:00:00.000Z');

/**
 * Two workspaces on one server: `a` sends from two verified domains, `b` from one; recipients'
 * domains resolved to groups as delivery would have left them.
 */
async function world(kind: StoreKind) {
  const clock = new ManualClock(AT);
  const server = await startTestServer(kind, { clock });
  const a = await server.sender('a', 'acme.test');
  await server.verifiedDomain(a.id, 'news.acme.test');
  const b = await server.sender('b', 'beta.test');
  await server.services.db('delivery_domains').insert([
    { domain: 'gmail.com', group_name: 'provider:google', expires_at: AT + 3_600_000 },
    { domain: 'corp.example', group_name: 'provider:google', expires_at: AT + 3_600_000 },
    { domain: 'other.org', group_name: 'mx:mx.other.org', expires_at: AT + 3_600_000 },
  ]);
  const call = (key: string, method: string, path: string, body?: unknown) => server.api(method, path, { key, body });
  const send = async (key: string, body: Record<string, unknown>) => {
    const res = await call(key, 'POST', '/emails', { from: 'x@acme.test', subject: 's', text: 't', ...body });
    if (res.status !== 201) throw new Error(`send: ${res.status} ${res.text}`);
    return res.body.id as number;
  };
  const statuses = async (key: string, id: number) =>
    Object.fromEntries((await call(key, 'GET', `/emails/${id}`)).body.recipients.map((r: { address: string; status: string }) => [r.address, r.status]));
  return { server, clock, a, b, call, send, statuses };
}

describe.each(STORES)('queue control through the API (%s)', (kind) => {
  it('holds, releases and cancels within the key’s workspace, by domain, group, stream and message', async () => {
    const w = await world(kind);
    const mine = await w.send(w.a.apiKey, { to: ['x@gmail.com', 'y@corp.example', 'z@other.org'] });
    const news = await w.send(w.a.apiKey, { to: ['n@other.org'], stream: 'broadcast' });
    const theirs = await w.send(w.b.apiKey, { from: 'x@beta.test', to: ['t@gmail.com', 'u@other.org'] });
    const hold = (body: unknown) => w.call(w.a.apiKey, 'POST', '/queue/hold', body);

    expect((await hold({ domain: 'GMAIL.COM' })).body).toStrictEqual({ affected: 1 });
    expect((await hold({ group: 'provider:google' })).body).toStrictEqual({ affected: 1 });
    expect(await w.statuses(w.a.apiKey, mine)).toStrictEqual({ 'x@gmail.com': 'held', 'y@corp.example': 'held', 'z@other.org': 'queued' });
    expect((await hold({ stream: 'broadcast' })).body).toStrictEqual({ affected: 1 });
    expect((await w.call(w.a.apiKey, 'GET', `/emails/${news}`)).body.status).toBe('held');
    expect((await hold({ email_id: mine })).body).toStrictEqual({ affected: 1 });
    expect((await w.call(w.a.apiKey, 'GET', `/emails/${mine}`)).body.status).toBe('held');
    expect((await w.call(w.a.apiKey, 'GET', '/emails?status=held')).body.data.map((m: { id: number }) => m.id)).toStrictEqual([news, mine]);
    // The other workspace's mail to the same domains and group is never touched.
    expect(await w.statuses(w.b.apiKey, theirs)).toStrictEqual({ 't@gmail.com': 'queued', 'u@other.org': 'queued' });
    // Nor is its message reachable by id.
    expect((await w.call(w.a.apiKey, 'POST', '/queue/cancel', { email_id: theirs })).status).toBe(404);

    w.clock.advance(60_000);
    // A release lifts holds, then gives back what no remaining hold covers: the message's own
    // hold still covers both recipients of the group, then the domain's hold covers one.
    expect((await w.call(w.a.apiKey, 'POST', '/queue/release', { group: 'provider:google' })).body).toStrictEqual({ affected: 0 });
    expect((await w.call(w.a.apiKey, 'POST', '/queue/release', { email_id: mine })).body).toStrictEqual({ affected: 2 });
    expect((await w.call(w.a.apiKey, 'POST', '/queue/release', { domain: 'gmail.com' })).body).toStrictEqual({ affected: 1 });
    expect(await w.statuses(w.a.apiKey, mine)).toStrictEqual({ 'x@gmail.com': 'queued', 'y@corp.example': 'queued', 'z@other.org': 'queued' });
    // Released mail is due at once.
    const claimed = await queueRepo.claim(w.server.services.db, { owner: 't', now: w.clock.now(), leaseMs: 60_000, limit: 100 });
    expect(claimed.filter((r) => r.message_id === mine).length).toBe(3);

    expect((await w.call(w.b.apiKey, 'POST', '/queue/cancel', { group: 'mx:mx.other.org' })).body).toStrictEqual({ affected: 0 }); // claimed: in flight
  });

  it('refuses a filter that names nothing, or names something unknown, with a 422', async () => {
    const w = await world(kind);
    await w.send(w.a.apiKey, { to: ['x@gmail.com'] });
    for (const action of ['hold', 'release', 'cancel']) {
      const empty = await w.call(w.a.apiKey, 'POST', `/queue/${action}`, {});
      expect(empty.status).toBe(422);
      expect(empty.body).toStrictEqual({ error: 'Name at least one of domain, group, stream, email_id: an empty filter would take the whole queue' });
    }
    const noBody = await w.server.api('POST', '/queue/cancel', { key: w.a.apiKey });
    expect(noBody.status).toBe(422);
    expect((await w.call(w.a.apiKey, 'POST', '/queue/hold', { workspace: 'b' })).status).toBe(422);
    expect((await w.call(w.a.apiKey, 'POST', '/queue/hold', { stream: 'marketing' })).body).toStrictEqual({
      error: 'Field `stream` must be `transactional` or `broadcast`',
    });
    expect((await w.call(w.a.apiKey, 'POST', '/queue/hold', { domain: '' })).status).toBe(422);
    expect((await w.call(w.a.apiKey, 'GET', '/emails?status=held')).body.data).toStrictEqual([]);
  });

  it('lets a domain-scoped key act only on its own sending domain’s mail', async () => {
    const w = await world(kind);
    const plain = await w.send(w.a.apiKey, { to: ['x@gmail.com'] });
    const news = await w.send(w.a.apiKey, { from: 'n@news.acme.test', to: ['y@gmail.com'] });
    const scoped = (await w.server.services.tenancy.createKey(w.a.id, { domain: 'news.acme.test' })).secret;
    expect((await w.call(scoped, 'POST', '/queue/hold', { domain: 'gmail.com' })).body).toStrictEqual({ affected: 1 });
    expect((await w.call(w.a.apiKey, 'GET', `/emails/${plain}`)).body.status).toBe('queued');
    expect((await w.call(w.a.apiKey, 'GET', `/emails/${news}`)).body.status).toBe('held');
    expect((await w.call(scoped, 'POST', '/queue/cancel', { email_id: plain })).status).toBe(404);

    // Its standing hold covers its own later mail only.
    const later = await w.send(w.a.apiKey, { to: ['z@gmail.com'] });
    const laterNews = await w.send(w.a.apiKey, { from: 'n@news.acme.test', to: ['w@gmail.com'] });
    expect(await queueControlRepo.sweepHolds(w.server.services.db, w.clock.now())).toBe(1);
    expect((await w.call(w.a.apiKey, 'GET', `/emails/${later}`)).body.status).toBe('queued');
    expect((await w.call(w.a.apiKey, 'GET', `/emails/${laterNews}`)).body.status).toBe('held');
    // A workspace-wide hold is not the domain key's to release.
    await w.call(w.a.apiKey, 'POST', '/queue/hold', { group: 'provider:google' });
    expect((await w.call(scoped, 'POST', '/queue/release', { domain: 'gmail.com' })).body).toStrictEqual({ affected: 0 });
    expect((await w.call(w.a.apiKey, 'POST', '/queue/release', { group: 'provider:google' })).body).toStrictEqual({ affected: 4 });
  });

  it('holds mail accepted after a hold: never claimed, held by the sweep, and not aged while held', async () => {
    const w = await world(kind);
    const db = w.server.services.db;
    expect((await w.call(w.a.apiKey, 'POST', '/queue/hold', { group: 'provider:google' })).body).toStrictEqual({ affected: 0 });
    const id = await w.send(w.a.apiKey, { to: ['x@gmail.com', 'y@other.org'] });
    expect(await w.statuses(w.a.apiKey, id)).toStrictEqual({ 'x@gmail.com': 'queued', 'y@other.org': 'queued' });
    const claimed = await queueRepo.claim(db, { owner: 't', now: w.clock.now(), leaseMs: 3_600_000, limit: 100 });
    expect(claimed.map((r) => r.address)).toStrictEqual(['y@other.org']);
    expect(await queueControlRepo.sweepHolds(db, w.clock.now())).toBe(1);
    expect((await w.call(w.a.apiKey, 'GET', `/emails/${id}`)).body.recipients.find((r: { address: string }) => r.address === 'x@gmail.com').status).toBe('held');

    w.clock.advance(2 * 86_400_000);
    expect((await w.call(w.a.apiKey, 'POST', '/queue/release', { group: 'provider:google' })).body).toStrictEqual({ affected: 1 });
    const row = await db('recipients').where({ address: 'x@gmail.com' }).first('due_at', 'first_due_at');
    expect([Number(row.due_at), Number(row.first_due_at)]).toStrictEqual([w.clock.now(), w.clock.now()]);
  });

  it('does not bill canceled mail and suppresses nothing; the cancel of a scheduled message gives its usage back too', async () => {
    const w = await world(kind);
    const usage = async () => (await w.call(w.a.apiKey, 'GET', '/usage')).body.totals;
    const queued = await w.send(w.a.apiKey, { to: ['x@gmail.com', 'y@gmail.com', 'z@other.org'] });
    const scheduled = await w.send(w.a.apiKey, { to: ['s@gmail.com'], stream: 'broadcast', scheduled_at: new Date(AT + 3_600_000).toISOString() });
    await w.send(w.b.apiKey, { from: 'x@beta.test', to: ['t@gmail.com'] });
    expect(await usage()).toStrictEqual({ transactional: 3, broadcast: 1 });

    expect((await w.call(w.a.apiKey, 'POST', '/queue/cancel', { domain: 'gmail.com', stream: 'transactional' })).body).toStrictEqual({ affected: 2 });
    expect(await w.statuses(w.a.apiKey, queued)).toStrictEqual({ 'x@gmail.com': 'canceled', 'y@gmail.com': 'canceled', 'z@other.org': 'queued' });
    expect(await usage()).toStrictEqual({ transactional: 1, broadcast: 1 });
    expect((await w.call(w.a.apiKey, 'GET', '/suppressions')).body.data).toStrictEqual([]);
    expect((await w.call(w.a.apiKey, 'GET', `/emails/${queued}`)).body.events).toStrictEqual([]);

    expect((await w.call(w.a.apiKey, 'POST', `/emails/${scheduled}/cancel`)).body.status).toBe('canceled');
    expect(await usage()).toStrictEqual({ transactional: 1, broadcast: 0 });
    expect((await w.call(w.b.apiKey, 'GET', '/usage')).body.totals).toStrictEqual({ transactional: 1, broadcast: 0 });
  });

  it('shows waiting mail per destination group in GET /stats/queue, the workspace’s own only', async () => {
    const w = await world(kind);
    await w.send(w.a.apiKey, { to: ['x@gmail.com', 'y@corp.example', 'z@other.org', 'q@unknown.example'] });
    await w.send(w.b.apiKey, { from: 'x@beta.test', to: ['t@gmail.com'] });
    await w.call(w.a.apiKey, 'POST', '/queue/hold', { group: 'mx:mx.other.org' });
    await w.server.services.db('delivery_groups').insert({ name: 'provider:google', suspended_until: AT + 300_000, reason: '421 4.7.28 slow down', updated_at: AT });
    const stats = (await w.call(w.a.apiKey, 'GET', '/stats/queue')).body;
    expect(stats).toMatchObject({ queued: 3, held: 1 });
    expect(stats.groups).toStrictEqual([
      { group: 'mx:mx.other.org', queued: 0, deferred: 0, held: 1, connections: 10, per_minute: null, on_hold: true },
      {
        group: 'provider:google',
        queued: 2,
        deferred: 0,
        held: 0,
        // The built-in Google rule's connections (docs/SHAPING.md), not the default 10.
        connections: 5,
        per_minute: null,
        suspended_until: '2026-03-02T10:05:00.000Z',
        reason: '421 4.7.28 slow down',
        on_hold: false,
      },
      { group: 'unresolved', queued: 1, deferred: 0, held: 0, connections: 10, per_minute: null, on_hold: false },
    ]);
    const theirs = (await w.call(w.b.apiKey, 'GET', '/stats/queue')).body.groups;
    expect(theirs.map((g: { group: string; queued: number }) => [g.group, g.queued])).toStrictEqual([['provider:google', 1]]);
  });

  it('documents the three routes in the OpenAPI document', async () => {
    const w = await world(kind);
    const doc = (await w.server.api('GET', '/openapi.json')).body;
    for (const action of ['hold', 'release', 'cancel']) {
      const op = doc.paths[`/api/v1/queue/${action}`].post;
      expect(Object.keys(op.requestBody.content['application/json'].schema.properties)).toStrictEqual(['domain', 'group', 'stream', 'email_id']);
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '422']));
    }
    expect(doc.paths['/api/v1/stats/queue'].get.responses['200'].content['application/json'].schema.properties.groups).toBeDefined();
  });
});
