import { describe, expect, it } from 'vitest';
import { ManualClock } from '../helpers/clock.ts';
import { STORES } from '../helpers/stores.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

async function ready(kind: 'sqlite' | 'pg', clock?: ManualClock) {
  const server = await startTestServer(kind, { clock });
  const ws = await server.workspace();
  await server.verifiedDomain(ws.id, 'acme.test');
  const send = (body: Record<string, unknown>, headers: Record<string, string> = {}) => server.api('POST', '/emails', { key: ws.apiKey, body, headers });
  return { server, ws, send };
}

const base = { from: 'Acme <news@acme.test>', to: 'user@example.org', subject: 'Hello', text: 'Hi there' };

describe.each(STORES)('POST /emails (%s)', (kind) => {
  it('accepts a valid send with 201 {id, stream} and shows every field', async () => {
    const { server, ws, send } = await ready(kind);
    const res = await send({
      ...base,
      to: ['user@example.org', 'USER@example.org', 'Two <two@example.net>'],
      cc: 'cc@example.org',
      bcc: ['bcc@example.org'],
      replyTo: 'support@acme.test',
      html: '<p>Hi</p>',
      headers: { 'X-Campaign': 'fall' },
      tags: [{ name: 'kind', value: 'welcome' }],
    });
    expect(res.status).toBe(201);
    expect(res.body).toStrictEqual({ id: expect.any(Number), stream: 'transactional' });
    expect(Number.isInteger(res.body.id)).toBe(true);

    const got = await server.api('GET', `/emails/${res.body.id}`, { key: ws.apiKey });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      id: res.body.id,
      stream: 'transactional',
      status: 'queued',
      from: 'Acme <news@acme.test>',
      to: ['user@example.org', 'USER@example.org', 'Two <two@example.net>'],
      cc: ['cc@example.org'],
      bcc: ['bcc@example.org'],
      reply_to: ['support@acme.test'],
      subject: 'Hello',
      tags: [{ name: 'kind', value: 'welcome' }],
      scheduled_at: null,
      events: [],
    });
    expect(got.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(got.body.message_id).toMatch(new RegExp(`^<${res.body.id}\\.[0-9a-f]+@acme\\.test>$`));
    // Duplicates collapse case-insensitively: four distinct recipients.
    expect(got.body.recipients.map((r: { address: string }) => r.address)).toStrictEqual(['user@example.org', 'two@example.net', 'cc@example.org', 'bcc@example.org']);
    for (const r of got.body.recipients) expect(r).toMatchObject({ status: 'queued', attempts: 0, last_response: null });
  });

  it('honours stream broadcast and accepts reply_to as well as replyTo', async () => {
    const { server, ws, send } = await ready(kind);
    const b = await send({ ...base, stream: 'broadcast', reply_to: ['a@acme.test', 'b@acme.test'] });
    expect(b.body.stream).toBe('broadcast');
    const got = await server.api('GET', `/emails/${b.body.id}`, { key: ws.apiKey });
    expect(got.body).toMatchObject({ stream: 'broadcast', reply_to: ['a@acme.test', 'b@acme.test'] });
    const both = await send({ ...base, replyTo: 'a@acme.test', reply_to: 'b@acme.test' });
    expect(both.status).toBe(422);
  });

  it('refuses every invalid request with 422 naming the field, and stores nothing', async () => {
    const { server, ws, send } = await ready(kind);
    const fifty1 = Array.from({ length: 51 }, (_, i) => `r${i}@example.org`);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ ...base, from: undefined }, /Missing required field `from`/],
      [{ ...base, to: undefined }, /Missing required field `to`/],
      [{ ...base, subject: undefined }, /Missing required field `subject`/],
      [{ ...base, subject: '  ' }, /`subject` must not be empty/],
      [{ ...base, text: undefined }, /at least one of `html`, `text` or `attachments`/],
      [{ ...base, to: 'not-an-address' }, /`to` has an invalid address "not-an-address"/],
      [{ ...base, to: ['ok@example.org', 'bad@@example.org'] }, /`to` has an invalid address "bad@@example.org"/],
      [{ ...base, cc: 'x@' }, /`cc` has an invalid address "x@"/],
      [{ ...base, bcc: ['a b@example.org'] }, /`bcc` has an invalid address/],
      [{ ...base, reply_to: 'nope' }, /`reply_to` has an invalid address "nope"/],
      [{ ...base, replyTo: 'nope' }, /`replyTo` has an invalid address "nope"/],
      [{ ...base, from: 'news@unverified.test' }, /domain unverified\.test/],
      [{ ...base, stream: 'marketing' }, /`stream` must be `transactional` or `broadcast`/],
      [{ ...base, scheduled_at: '2030-01-01T10:00:00' }, /`scheduled_at` must be an ISO 8601 timestamp with a time zone offset/],
      [{ ...base, scheduled_at: '2020-01-01T10:00:00Z' }, /`scheduled_at` is in the past/],
      [{ ...base, tags: Array.from({ length: 11 }, (_, i) => ({ name: `t${i}`, value: 'v' })) }, /Field `tags` must hold at most 10 items/],
      [{ ...base, tags: [{ name: 'ok', value: 'v'.repeat(257) }] }, /Field `tags.0.value` must NOT have more than 256 characters/],
      [{ ...base, metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) }, /Field `metadata` must NOT have more than 20 properties/],
      [{ ...base, metadata: { order: 'v'.repeat(257) } }, /Field `metadata.order` must NOT have more than 256 characters/],
      [{ ...base, metadata: { order: 42 } }, /Field `metadata.order` must be a string/],
      [{ ...base, metadata: { 'has space': 'v' } }, /Field `metadata` has a key "has space": keys are 1-64 letters, digits, _ or -/],
      // Not rolled over into March 2nd: a day that does not exist is refused.
      [{ ...base, scheduled_at: `${new Date().getUTCFullYear() + 1}-02-30T10:00:00Z` }, /`scheduled_at` is not a valid date/],
      [{ ...base, scheduled_at: '2026-12-01T24:00:00Z' }, /`scheduled_at` is not a valid date/],
      [{ ...base, scheduled_at: new Date(Date.now() + 31 * 86400_000).toISOString() }, /`scheduled_at` is more than 30 days ahead/],
      [{ ...base, headers: { 'X-Note': 'a\r\nBcc: victim@example.org' } }, /Header `X-Note` in `headers` must not contain line breaks/],
      [{ ...base, subject: 'Hi\r\nBcc: victim@example.org' }, /`subject` must not contain line breaks/],
      [{ ...base, from: 'Evil\r\nBcc: x@y.org <news@acme.test>' }, /`from` has an invalid address .*line breaks/],
      [{ ...base, to: 'Name\n <user@example.org>' }, /`to` has an invalid address .*line breaks/],
      [{ ...base, headers: { 'message-ID': '<x@y>' } }, /Header `message-ID` in `headers` is set by the service/],
      [{ ...base, headers: { 'CONTENT-TYPE': 'text/plain' } }, /Header `CONTENT-TYPE`/],
      [{ ...base, headers: { 'x-MailSvc-stream': 'broadcast' } }, /Header `x-MailSvc-stream`/],
      [{ ...base, headers: { 'Bad Name': 'x' } }, /Header name "Bad Name"/],
      [{ ...base, to: fifty1 }, /Too many recipients: 51/],
      [{ ...base, subject: 42 }, /Field `subject` must be a string/],
      [{ ...base, to: { address: 'x@example.org' } }, /Field `to` must be a string or an array of strings/],
      [{ ...base, headers: { 'X-A': 1 } }, /Field `headers.X-A` must be a string/],
      [{ ...base, scheduledAt: '2030-01-01T00:00:00Z' }, /Unknown field `scheduledAt`/],
      [{ ...base, attachments: [{ filename: 'a.txt', content: '***' }] }, /`attachments\[0\]`.content must be base64/],
      [{ ...base, attachments: [{ filename: 'a\r\n.txt', content: 'aGk=' }] }, /`attachments\[0\]`.filename/],
    ];
    for (const [body, message] of cases) {
      const res = await send(body);
      expect(res.status, JSON.stringify(body).slice(0, 120)).toBe(422);
      expect(Object.keys(res.body)).toStrictEqual(['error']);
      expect(res.body.error).toMatch(message);
    }
    const fifty = await send({ ...base, to: fifty1.slice(0, 50) });
    expect(fifty.status).toBe(201);
    const list = await server.api('GET', '/emails', { key: ws.apiKey });
    expect(list.body.data).toHaveLength(1);
  });

  it('answers malformed JSON with 400 and an oversized body with 413, both as {error}', async () => {
    const { server, ws } = await ready(kind);
    const bad = await server.api('POST', '/emails', { key: ws.apiKey, raw: '{"from": "a@acme.test",', headers: { 'content-type': 'application/json' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toStrictEqual({ error: 'Request body is not valid JSON' });
    const big = await server.api('POST', '/emails', { key: ws.apiKey, body: { ...base, text: 'x'.repeat(11 * 1024 * 1024) } });
    expect(big.status).toBe(413);
    expect(big.body).toStrictEqual({ error: 'Request body exceeds the limit of 10 MB (10485760 bytes)' });
  });

  it('accepts attachments alone as content', async () => {
    const { server, ws, send } = await ready(kind);
    const res = await send({
      from: base.from,
      to: base.to,
      subject: 'File',
      attachments: [{ filename: 'r.pdf', content: Buffer.from('%PDF').toString('base64'), content_type: 'application/pdf' }],
    });
    expect(res.status).toBe(201);
    expect((await server.api('GET', `/emails/${res.body.id}`, { key: ws.apiKey })).body.status).toBe('queued');
  });
});

describe.each(STORES)('idempotency (%s)', (kind) => {
  it('replays the same key and body, refuses another body with 409, and never stores a 422', async () => {
    const clock = new ManualClock(Date.now());
    const { server, ws, send } = await ready(kind, clock);
    const key = { 'Idempotency-Key': 'order-1' };
    const first = await send(base, key);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await send({ text: base.text, subject: base.subject, to: base.to, from: base.from }, key);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');

    const other = await send({ ...base, subject: 'Different' }, key);
    expect(other.status).toBe(409);
    expect(other.body).toStrictEqual({ error: 'Idempotency-Key was already used with a different request' });

    const invalidFirst = await send({ ...base, to: 'nope' }, { 'Idempotency-Key': 'k-422' });
    expect(invalidFirst.status).toBe(422);
    const fixed = await send(base, { 'Idempotency-Key': 'k-422' });
    expect(fixed.status).toBe(201);
    expect(fixed.body.id).not.toBe(first.body.id);

    // Another API key of the same workspace has its own key space.
    const second = (await server.services.tenancy.createKey(ws.id, { name: 'two' })).secret;
    const otherKey = await server.api('POST', '/emails', { key: second, body: base, headers: key });
    expect(otherKey.status).toBe(201);
    expect(otherKey.body.id).not.toBe(first.body.id);

    clock.advance(24 * 3600_000 + 1000);
    const fresh = await send({ ...base, subject: 'Different' }, key);
    expect(fresh.status).toBe(201);
    expect(fresh.body.id).not.toBe(first.body.id);
    expect((await server.api('GET', '/emails', { key: ws.apiKey })).body.data).toHaveLength(4);
  });

  it('turns 20 concurrent requests with one key into exactly one message', async () => {
    const { server, ws, send } = await ready(kind);
    const answers = await Promise.all(Array.from({ length: 20 }, () => send(base, { 'Idempotency-Key': 'burst' })));
    const ids = new Set(answers.map((a) => a.body.id));
    for (const a of answers) expect(a.status).toBe(201);
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(19);
    expect((await server.api('GET', '/emails', { key: ws.apiKey })).body.data).toHaveLength(1);
  });

  it('refuses an over-long key', async () => {
    const { send } = await ready(kind);
    const res = await send(base, { 'Idempotency-Key': 'k'.repeat(257) });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatch(/Idempotency-Key/);
  });
});

export type { TestServer };
