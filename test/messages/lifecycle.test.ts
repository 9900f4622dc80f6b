import { describe, expect, it } from 'vitest';
import { ManualClock } from '../helpers/clock.ts';
import { STORES } from '../helpers/stores.ts';
import { startTestServer } from '../helpers/server.ts';

const base = { from: 'news@acme.test', subject: 'Hello', text: 'Hi' };

async function ready(kind: 'sqlite' | 'pg', clock?: ManualClock) {
  const server = await startTestServer(kind, { clock });
  const ws = await server.workspace();
  await server.verifiedDomain(ws.id, 'acme.test');
  const as = (key: string) => ({
    send: (body: Record<string, unknown>) => server.api('POST', '/emails', { key, body: { ...base, ...body } }),
    get: (path: string) => server.api('GET', path, { key }),
  });
  return { server, ws, ...as(ws.apiKey), as };
}

describe.each(STORES)('suppression on send (%s)', (kind) => {
  it('suppresses per stream, case-insensitively, and does not bill suppressed recipients', async () => {
    const { server, ws, send, get } = await ready(kind);
    const added = await server.api('POST', '/suppressions', { key: ws.apiKey, body: { address: 'Blocked@Example.org', stream: 'broadcast' } });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ address: 'blocked@example.org', stream: 'broadcast', reason: 'manual', email_id: null });
    expect((await server.api('POST', '/suppressions', { key: ws.apiKey, body: { address: 'blocked@example.org', stream: 'broadcast' } })).status).toBe(200);

    const b = await send({ to: ['BLOCKED@example.org', 'ok@example.org'], stream: 'broadcast' });
    const bm = (await get(`/emails/${b.body.id}`)).body;
    expect(bm.status).toBe('queued');
    expect(bm.recipients.map((r: { address: string; status: string }) => [r.address, r.status])).toStrictEqual([
      ['BLOCKED@example.org', 'suppressed'],
      ['ok@example.org', 'queued'],
    ]);
    const t = await send({ to: 'blocked@example.org' });
    expect((await get(`/emails/${t.body.id}`)).body.recipients[0].status).toBe('queued');

    const usageBefore = (await get('/usage')).body.totals;
    expect(usageBefore).toStrictEqual({ transactional: 1, broadcast: 1 });
    const all = await send({ to: 'blocked@example.org', stream: 'broadcast' });
    expect(all.status).toBe(201);
    const allMsg = (await get(`/emails/${all.body.id}`)).body;
    expect(allMsg.status).toBe('suppressed');
    expect(allMsg.recipients[0].status).toBe('suppressed');
    expect((await get('/usage')).body.totals).toStrictEqual(usageBefore);
    expect((await get('/emails?status=suppressed')).body.data.map((m: { id: number }) => m.id)).toStrictEqual([all.body.id]);
  });

  it('manages entries through /suppressions and refuses domain-scoped keys', async () => {
    const { server, ws, get } = await ready(kind);
    for (const [address, stream] of [
      ['a@x.org', 'transactional'],
      ['b@x.org', 'broadcast'],
      ['c@x.org', 'broadcast'],
    ]) {
      await server.api('POST', '/suppressions', { key: ws.apiKey, body: { address, stream } });
    }
    const page1 = await get('/suppressions?stream=broadcast&limit=1');
    expect(page1.body.data.map((e: { address: string }) => e.address)).toStrictEqual(['b@x.org']);
    const page2 = await get(`/suppressions?stream=broadcast&limit=1&cursor=${page1.body.next_cursor}`);
    expect(page2.body).toMatchObject({ data: [{ address: 'c@x.org' }], next_cursor: null });
    expect((await get('/suppressions/transactional/A@X.org')).body).toMatchObject({ address: 'a@x.org', reason: 'manual' });
    expect((await get('/suppressions/broadcast/a@x.org')).status).toBe(404);
    expect((await get('/suppressions/marketing/a@x.org')).status).toBe(422);
    expect((await server.api('POST', '/suppressions', { key: ws.apiKey, body: { address: 'not an address', stream: 'broadcast' } })).status).toBe(422);

    const scoped = (await server.services.tenancy.createKey(ws.id, { domain: 'acme.test' })).secret;
    expect((await server.api('DELETE', '/suppressions/transactional/a@x.org', { key: scoped })).status).toBe(403);
    expect((await server.api('POST', '/suppressions', { key: scoped, body: { address: 'd@x.org', stream: 'broadcast' } })).status).toBe(403);
    // Manual entries belong to no domain, so a domain-scoped key does not see them.
    expect((await server.api('GET', '/suppressions', { key: scoped })).body.data).toStrictEqual([]);

    const del = await server.api('DELETE', '/suppressions/transactional/a@x.org', { key: ws.apiKey });
    expect(del.body).toStrictEqual({ address: 'a@x.org', stream: 'transactional', deleted: true });
    expect((await get('/suppressions/transactional/a@x.org')).status).toBe(404);
  });
});

describe.each(STORES)('scheduling, cancel, listing (%s)', (kind) => {
  it('shows a scheduled message as scheduled; cancel makes it canceled; cancel again is 422', async () => {
    const clock = new ManualClock('2026-11-21T10:00:00.000Z');
    const { send, get, server, ws } = await ready(kind, clock);
    const res = await send({ to: 'later@example.org', scheduled_at: '2026-11-21T12:00:00+01:00' });
    const msg = (await get(`/emails/${res.body.id}`)).body;
    expect(msg).toMatchObject({ status: 'scheduled', scheduled_at: '2026-11-21T11:00:00.000Z' });
    expect(msg.recipients[0].status).toBe('scheduled');

    // Within the 60 s grace a past time sends now.
    const grace = await send({ to: 'now@example.org', scheduled_at: '2026-11-21T09:59:30Z' });
    expect((await get(`/emails/${grace.body.id}`)).body).toMatchObject({ status: 'queued', scheduled_at: null });

    const canceled = await server.api('POST', `/emails/${res.body.id}/cancel`, { key: ws.apiKey });
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({ id: res.body.id, status: 'canceled' });
    expect(canceled.body.recipients[0].status).toBe('canceled');
    const again = await server.api('POST', `/emails/${res.body.id}/cancel`, { key: ws.apiKey });
    expect(again.status).toBe(422);
    expect(again.body).toStrictEqual({ error: 'Only a scheduled message can be canceled; this one is canceled' });
    const queued = await server.api('POST', `/emails/${grace.body.id}/cancel`, { key: ws.apiKey });
    expect(queued.status).toBe(422);
    expect((await server.api('POST', '/emails/999999/cancel', { key: ws.apiKey })).status).toBe(404);
  });

  it('lists newest first with filters and a stable keyset cursor', async () => {
    const { send, get } = await ready(kind);
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await send({ to: `u${i}@example.org`, stream: i % 2 ? 'broadcast' : 'transactional' })).body.id);
    const first = await get('/emails?limit=2');
    expect(first.body.data.map((m: { id: number }) => m.id)).toStrictEqual([ids[4], ids[3]]);
    await send({ to: 'new@example.org' }); // added while paging: must not shift the next page
    const second = await get(`/emails?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.data.map((m: { id: number }) => m.id)).toStrictEqual([ids[2], ids[1]]);
    const third = await get(`/emails?limit=2&cursor=${second.body.next_cursor}`);
    expect(third.body).toMatchObject({ next_cursor: null });
    expect(third.body.data.map((m: { id: number }) => m.id)).toStrictEqual([ids[0]]);

    expect((await get('/emails?stream=broadcast')).body.data.map((m: { id: number }) => m.id)).toStrictEqual([ids[3], ids[1]]);
    expect((await get('/emails?recipient=U2@example.org')).body.data.map((m: { id: number }) => m.id)).toStrictEqual([ids[2]]);
    expect((await get('/emails?recipient_status=queued&limit=100')).body.data).toHaveLength(6);
    expect((await get('/emails?status=nope')).status).toBe(422);
    expect((await get('/emails?cursor=garbage')).status).toBe(422);
  });
});

describe.each(STORES)('domain-scoped keys and messages (%s)', (kind) => {
  it('cannot send from another domain nor read another domain’s message', async () => {
    const { server, ws, send, as } = await ready(kind);
    await server.verifiedDomain(ws.id, 'other.test');
    const scoped = as((await server.services.tenancy.createKey(ws.id, { domain: 'acme.test' })).secret);
    const mine = await scoped.send({ to: 'x@example.org' });
    expect(mine.status).toBe(201);
    const foreign = await scoped.send({ from: 'news@other.test', to: 'x@example.org' });
    expect(foreign.status).toBe(422);
    expect(foreign.body.error).toMatch(/only send from acme\.test, not other\.test/);

    const otherMsg = await send({ from: 'news@other.test', to: 'y@example.org' });
    expect(otherMsg.status).toBe(201);
    expect((await scoped.get(`/emails/${otherMsg.body.id}`)).status).toBe(404);
    expect((await scoped.get(`/emails/${otherMsg.body.id}`)).body).toStrictEqual({ error: 'Not found' });
    expect((await scoped.get(`/emails/${mine.body.id}`)).status).toBe(200);
    expect((await scoped.get('/emails')).body.data.map((m: { id: number }) => m.id)).toStrictEqual([mine.body.id]);
    expect((await scoped.get('/usage')).status).toBe(403);

    const stranger = await server.workspace('stranger');
    expect((await server.api('GET', `/emails/${mine.body.id}`, { key: stranger.apiKey })).status).toBe(404);
  });
});
