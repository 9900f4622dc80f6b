import { describe, expect, it } from 'vitest';
import { ManualClock } from '../helpers/clock.ts';
import { STORES, type StoreKind } from '../helpers/stores.ts';
import { startTestServer } from '../helpers/server.ts';

async function ready(kind: StoreKind, clock = new ManualClock('2026-11-26T10:00:00.000Z')) {
  const server = await startTestServer(kind, { clock });
  const ws = await server.workspace('batcher');
  await server.verifiedDomain(ws.id, 'acme.test');
  const batch = (body: unknown, headers: Record<string, string> = {}, key = ws.apiKey) => server.api('POST', '/emails/batch', { key, body, headers });
  const count = async () => (await server.api('GET', '/emails?limit=100', { key: ws.apiKey })).body.data.length as number;
  return { server, ws, batch, count, clock };
}

const item = (i: number, extra: Record<string, unknown> = {}) => ({
  from: 'Acme <news@acme.test>',
  to: `user${i}@example.org`,
  subject: `Hello ${i}`,
  text: `Hi number ${i}`,
  ...extra,
});

describe.each(STORES)('POST /emails/batch (%s)', (kind) => {
  it('accepts up to 100 messages with 201 and their ids and streams in the order given', async () => {
    const { server, ws, batch } = await ready(kind);
    await server.services.tenancy.setLimits('batcher', { perMinute: 1000 });
    const items = Array.from({ length: 100 }, (_, i) => item(i, i % 3 === 0 ? { stream: 'broadcast' } : {}));
    const res = await batch(items);
    expect(res.status).toBe(201);
    expect(res.body.data).toHaveLength(100);
    const ids = res.body.data.map((d: { id: number }) => d.id);
    expect(new Set(ids).size).toBe(100);
    expect(res.body.data.map((d: { stream: string }) => d.stream)).toStrictEqual(items.map((_, i) => (i % 3 === 0 ? 'broadcast' : 'transactional')));
    for (const i of [0, 41, 99]) {
      const got = await server.api('GET', `/emails/${ids[i]}`, { key: ws.apiKey });
      expect(got.body).toMatchObject({ subject: `Hello ${i}`, to: [`user${i}@example.org`], status: 'queued' });
    }
  });

  it('refuses the whole batch with 422 naming the index and the field when one item is invalid, and stores nothing', async () => {
    const { batch, count, server, ws } = await ready(kind);
    const otherWs = await server.workspace();
    await server.verifiedDomain(otherWs.id, 'other.test');
    const cases: [unknown, string][] = [
      [[item(0), item(1), { ...item(2), subject: undefined }], 'Item 2: Missing required field `subject`'],
      [[item(0), { ...item(1), scheduledAt: '2026-11-27T10:00:00Z' }], 'Item 1: Unknown field `scheduledAt`'],
      [[item(0), { ...item(1), to: 42 }], 'Item 1: Field `to` must be a string or an array of strings'],
      [[item(0), item(1), item(2), { ...item(3), to: 'not an address' }], 'Item 3: Field `to` has an invalid address "not an address": it'],
      [[item(0), { ...item(1), from: 'x@other.test' }], 'Item 1: Field `from`: domain other.test is not a domain of this workspace'],
      [[{ ...item(0), tags: Array.from({ length: 11 }, (_, i) => ({ name: `t${i}`, value: 'v' })) }], 'Item 0: Field `tags` must hold at most 10 items'],
      [[{ ...item(0), metadata: { ok: 'yes', 'bad key': 'no' } }], 'Item 0: Field `metadata` has a key "bad key": keys are 1-64 letters, digits, _ or -'],
      [Array.from({ length: 101 }, (_, i) => item(i)), 'The request body must hold at most 100 items'],
      [[], 'The request body must hold at least 1 item'],
      [item(0), 'The request body must be a JSON array'],
    ];
    for (const [body, message] of cases) {
      const res = await batch(body);
      expect(res.status, message).toBe(422);
      expect(res.body.error).toContain(message);
    }
    expect(await count()).toBe(0);
    expect((await server.api('GET', '/usage', { key: ws.apiKey })).body.data ?? []).toStrictEqual([]);
  });

  it('replays a batch sent again with its Idempotency-Key, and refuses the key with another body', async () => {
    const { batch, count } = await ready(kind);
    const items = [item(0), item(1), item(2)];
    const first = await batch(items, { 'Idempotency-Key': 'batch-1' });
    expect(first.status).toBe(201);
    const again = await batch(items, { 'Idempotency-Key': 'batch-1' });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toStrictEqual(first.body);
    const other = await batch([item(0), item(1)], { 'Idempotency-Key': 'batch-1' });
    expect(other.status).toBe(409);
    expect(other.body.error).toBe('Idempotency-Key was already used with a different request');
    expect(await count()).toBe(3);
  });

  it('writes one batch once when the same Idempotency-Key arrives concurrently', async () => {
    const { batch, count } = await ready(kind);
    const items = [item(0), item(1)];
    const answers = await Promise.all(Array.from({ length: 5 }, () => batch(items, { 'Idempotency-Key': 'same' })));
    expect(answers.map((a) => a.status)).toStrictEqual([201, 201, 201, 201, 201]);
    for (const a of answers) expect(a.body).toStrictEqual(answers[0]!.body);
    expect(await count()).toBe(2);
  });

  it('counts each message against the rate limit: a batch that does not fit is refused whole', async () => {
    const { batch, count, clock } = await ready(kind);
    const fifty = await batch(Array.from({ length: 50 }, (_, i) => item(i)));
    expect(fifty.status).toBe(201);
    expect(fifty.headers.get('ratelimit-remaining')).toBe('10');
    const twenty = await batch(Array.from({ length: 20 }, (_, i) => item(i)));
    expect(twenty.status).toBe(429);
    expect(twenty.body).toStrictEqual({ error: 'Rate limit exceeded: 60 requests per minute' });
    expect(Number(twenty.headers.get('retry-after'))).toBeGreaterThan(0);
    // This listing is one more request of the key.
    expect(await count()).toBe(50);
    // A request refused with 429 counts for nothing (SPEC §3), not even the one message counted
    // before its size was known: of the ten left before it, the listing took one.
    const nine = await batch(Array.from({ length: 9 }, (_, i) => item(i)));
    expect(nine.status).toBe(201);
    expect(nine.headers.get('ratelimit-remaining')).toBe('0');
    clock.advance(61_000);
    const tooBig = await batch(Array.from({ length: 61 }, (_, i) => item(i)));
    expect(tooBig.status).toBe(422);
    expect(tooBig.body.error).toBe("A batch of 61 messages is more than this key's rate limit of 60 requests per minute; send smaller batches");
  });

  it('keeps each message its own: suppressed recipients, tags and metadata per item', async () => {
    const { server, ws, batch } = await ready(kind);
    await server.api('POST', '/suppressions', { key: ws.apiKey, body: { address: 'user1@example.org', stream: 'transactional' } });
    const res = await batch([
      item(0, { tags: [{ name: 'campaign', value: 'fall' }], metadata: { order: 'A-1' } }),
      item(1),
      item(2, { stream: 'broadcast', metadata: { order: 'A-3', customer: '42' } }),
    ]);
    expect(res.status).toBe(201);
    const [a, b, c] = await Promise.all(res.body.data.map((d: { id: number }) => server.api('GET', `/emails/${d.id}`, { key: ws.apiKey })));
    expect(a!.body).toMatchObject({ status: 'queued', tags: [{ name: 'campaign', value: 'fall' }], metadata: { order: 'A-1' } });
    expect(b!.body).toMatchObject({ status: 'suppressed', tags: [], metadata: {} });
    expect(c!.body).toMatchObject({ status: 'queued', stream: 'broadcast', metadata: { order: 'A-3', customer: '42' } });
    const usage = await server.api('GET', '/usage', { key: ws.apiKey });
    const billed = (usage.body.data as { recipients?: number; count?: number }[]).reduce((n, d) => n + (d.recipients ?? d.count ?? 0), 0);
    expect(billed).toBe(2);
  });

  it('renders a stored template with each item’s own variables, and names the item whose variable is missing', async () => {
    const { server, ws, batch, count } = await ready(kind);
    const created = await server.api('POST', '/templates', {
      key: ws.apiKey,
      body: { name: 'shipped', subject: 'Order {{order}} shipped', html: '<p>Hi {{name}}, order {{order}} is on its way.</p>' },
    });
    expect(created.status, created.text).toBe(201);
    const base = { from: 'Acme <news@acme.test>', template: 'shipped' };
    const missing = await batch([
      { ...base, to: 'a@example.org', variables: { name: 'Ann', order: '1' } },
      { ...base, to: 'b@example.org', variables: { name: 'Bob' } },
    ]);
    expect(missing.status).toBe(422);
    expect(missing.body.error).toBe('Item 1: Missing template variable `order`');
    expect(await count()).toBe(0);

    const res = await batch([
      { ...base, to: 'a@example.org', variables: { name: 'Ann <3', order: '1' } },
      { ...base, to: 'b@example.org', variables: { name: 'Bob', order: 2 } },
    ]);
    expect(res.status).toBe(201);
    const [a, b] = await Promise.all(res.body.data.map((d: { id: number }) => server.api('GET', `/emails/${d.id}/content`, { key: ws.apiKey })));
    expect(a!.body.html).toContain('<p>Hi Ann &lt;3, order 1 is on its way.</p>');
    expect(b!.body.html).toContain('<p>Hi Bob, order 2 is on its way.</p>');
    const subjects = await Promise.all(res.body.data.map(async (d: { id: number }) => (await server.api('GET', `/emails/${d.id}`, { key: ws.apiKey })).body.subject));
    expect(subjects).toStrictEqual(['Order 1 shipped', 'Order 2 shipped']);
  });
});
