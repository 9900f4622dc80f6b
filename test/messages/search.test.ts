import { describe, expect, it } from 'vitest';
import { pruneRetained } from '../../src/retention/messages.ts';
import { ManualClock } from '../helpers/clock.ts';
import { STORES, type StoreKind } from '../helpers/stores.ts';
import { startTestServer } from '../helpers/server.ts';

interface Sent {
  id: number;
  subject: string;
}

/** A workspace sending from two domains, a clock the test moves, and a way to send and search. */
async function world(kind: StoreKind) {
  const clock = new ManualClock('2026-11-21T10:00:00.000Z');
  const server = await startTestServer(kind, { clock });
  const ws = await server.workspace('search');
  await server.verifiedDomain(ws.id, 'acme.test');
  await server.verifiedDomain(ws.id, 'other.test');
  const send = async (body: Record<string, unknown>): Promise<Sent> => {
    const res = await server.api('POST', '/emails', { key: ws.apiKey, body: { from: 'news@acme.test', to: 'user@example.org', text: 'Hi', ...body } });
    expect(res.status, res.text).toBe(201);
    return { id: res.body.id, subject: String(body.subject) };
  };
  const search = async (query: string, key = ws.apiKey) => {
    const res = await server.api('GET', `/emails?${query}`, { key });
    expect(res.status, res.text).toBe(200);
    return res.body as { data: { id: number; subject: string }[]; next_cursor: string | null };
  };
  const ids = async (query: string, key?: string) => (await search(query, key)).data.map((m) => m.id);
  return { server, ws, clock, send, search, ids };
}

describe.each(STORES)('searching messages, GET /emails (%s)', (kind) => {
  it('finds messages by sender, subject, tag, metadata and creation time, each alone and together', async () => {
    const { ws, clock, send, ids, server } = await world(kind);
    const welcome = await send({ from: 'Acme <News@acme.test>', subject: 'Welcome to Acme, Ada', tags: [{ name: 'kind', value: 'welcome' }], metadata: { user: 'u1' } });
    clock.advance(60_000);
    const receipt = await send({
      subject: 'Your receipt #1001',
      tags: [
        { name: 'kind', value: 'receipt' },
        { name: 'campaign', value: 'fall-2026' },
      ],
      metadata: { user: 'u1', order: '1001' },
    });
    clock.advance(60_000);
    const other = await send({ from: 'billing@other.test', subject: 'Invoice 50% off_now', tags: [{ name: 'campaign', value: 'fall-2026' }], metadata: { user: 'u2' } });
    clock.advance(60_000);
    const plain = await send({ subject: 'welcome back' });

    // Newest first, like the plain list.
    expect(await ids('')).toStrictEqual([plain.id, other.id, receipt.id, welcome.id]);
    // The sender address, without case; the display name plays no part.
    expect(await ids('from=news%40acme.test')).toStrictEqual([plain.id, receipt.id, welcome.id]);
    expect(await ids('from=NEWS%40ACME.TEST')).toStrictEqual([plain.id, receipt.id, welcome.id]);
    expect(await ids('from=billing%40other.test')).toStrictEqual([other.id]);
    expect(await ids('from=nobody%40acme.test')).toStrictEqual([]);
    // Contained in the subject, without case, through the trigram index (3+ characters) or not.
    expect(await ids('subject=welcome')).toStrictEqual([plain.id, welcome.id]);
    expect(await ids('subject=WELCOME%20TO')).toStrictEqual([welcome.id]);
    expect(await ids('subject=ceipt%20%23')).toStrictEqual([receipt.id]);
    expect(await ids('subject=da')).toStrictEqual([welcome.id]);
    // % and _ are letters, not patterns.
    expect(await ids('subject=50%25')).toStrictEqual([other.id]);
    expect(await ids('subject=%25')).toStrictEqual([other.id]);
    expect(await ids('subject=f_n')).toStrictEqual([other.id]);
    expect(await ids('subject=o_')).toStrictEqual([]);
    // A tag by name and value, or by name alone; every tag given must match.
    expect(await ids('tag=kind:welcome')).toStrictEqual([welcome.id]);
    expect(await ids('tag=campaign')).toStrictEqual([other.id, receipt.id]);
    expect(await ids('tag=campaign:fall-2026&tag=kind:receipt')).toStrictEqual([receipt.id]);
    expect(await ids('tag=campaign&tag=kind')).toStrictEqual([receipt.id]);
    expect(await ids('tag=kind:Welcome')).toStrictEqual([]);
    expect(await ids('tag=kind:welcome&tag=kind:receipt')).toStrictEqual([]);
    // Metadata by key, every key given.
    expect(await ids('metadata.user=u1')).toStrictEqual([receipt.id, welcome.id]);
    expect(await ids('metadata.user=u1&metadata.order=1001')).toStrictEqual([receipt.id]);
    expect(await ids('metadata.order=1002')).toStrictEqual([]);
    // created_after is inclusive, created_before exclusive, so ranges that meet do not overlap.
    expect(await ids('created_after=2026-11-21T10:01:00Z')).toStrictEqual([plain.id, other.id, receipt.id]);
    expect(await ids('created_before=2026-11-21T10:01:00Z')).toStrictEqual([welcome.id]);
    expect(await ids('created_after=2026-11-21T11:01:00%2B01:00&created_before=2026-11-21T10:03:00.000Z')).toStrictEqual([other.id, receipt.id]);
    // With each other and with the filters that were there before.
    expect(await ids('tag=campaign&from=news%40acme.test&subject=receipt&metadata.user=u1&created_after=2026-11-21T10:00:30Z')).toStrictEqual([receipt.id]);
    expect(await ids('subject=welcome&created_before=2026-11-21T10:02:00Z')).toStrictEqual([welcome.id]);
    expect(await ids('metadata.user=u1&status=queued&stream=transactional&recipient=USER%40example.org')).toStrictEqual([receipt.id, welcome.id]);
    expect(await ids('metadata.user=u1&status=delivered')).toStrictEqual([]);
    expect(await ids('tag=campaign&stream=broadcast')).toStrictEqual([]);

    // Another workspace's messages are never found.
    const two = await server.workspace('two');
    expect(await ids('tag=campaign', two.apiKey)).toStrictEqual([]);
    expect(await ids('subject=welcome', two.apiKey)).toStrictEqual([]);
    expect(ws.id).not.toBe(two.id);
  });

  it('pages through the matches of a search with the cursor', async () => {
    const { send, search } = await world(kind);
    const sent: Sent[] = [];
    for (let i = 0; i < 7; i++) sent.push(await send({ subject: `Order ${i} shipped`, tags: [{ name: 'kind', value: i % 2 ? 'odd' : 'even' }] }));
    for (const [query, expected] of [
      ['tag=kind:even', [6, 4, 2, 0]],
      ['subject=shipped', [6, 5, 4, 3, 2, 1, 0]],
      ['from=news%40acme.test&subject=order', [6, 5, 4, 3, 2, 1, 0]],
    ] as const) {
      const seen: number[] = [];
      let cursor: string | null = null;
      do {
        const page = await search(`${query}&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.data.length).toBeLessThanOrEqual(3);
        seen.push(...page.data.map((m) => m.id));
        cursor = page.next_cursor;
      } while (cursor);
      expect(seen, query).toStrictEqual(expected.map((i) => sent[i]!.id));
    }
  });

  it('lets a domain-scoped key find only its domain’s messages', async () => {
    const { server, ws, send, ids } = await world(kind);
    const acme = await send({ subject: 'Fall sale', tags: [{ name: 'campaign', value: 'fall' }], metadata: { region: 'eu' } });
    const other = await send({ from: 'news@other.test', subject: 'Fall sale', tags: [{ name: 'campaign', value: 'fall' }], metadata: { region: 'eu' } });
    const scoped = await server.api('POST', '/api-keys', { key: ws.apiKey, body: { name: 'acme only', domain: 'acme.test' } });
    const key = scoped.body.api_key as string;
    for (const query of ['tag=campaign:fall', 'subject=fall%20sale', 'metadata.region=eu', 'created_after=2026-01-01T00:00:00Z', 'from=news%40acme.test']) {
      expect(await ids(query, key), query).toStrictEqual([acme.id]);
    }
    expect(await ids('from=news%40other.test', key)).toStrictEqual([]);
    expect(await ids('tag=campaign:fall')).toStrictEqual([other.id, acme.id]);
  });

  it('pages through a created range in created_at order, a message stamped by a late clock in its place', async () => {
    const { server, ws, ids, search } = await world(kind);
    const { db } = server.services;
    // 3,000 messages a minute apart from 2026-10-01, written directly.
    const start = Date.parse('2026-10-01T00:00:00Z');
    const row = (i: number, createdAt: number) => ({
      workspace_id: ws.id,
      domain: 'acme.test',
      stream: 'transactional',
      status: 'delivered',
      source: 'api',
      from_header: 'news@acme.test',
      from_address: 'news@acme.test',
      subject: `Bulk ${i}`,
      envelope: JSON.stringify({ to: ['user@example.org'], cc: [], bcc: [], reply_to: [], tags: [] }),
      message_id_header: `<${i}@acme.test>`,
      created_at: createdAt,
    });
    const rows = Array.from({ length: 3000 }, (_, i) => row(i, start + i * 60_000));
    // Another process's clock was behind: its message has the newest id but an older time, and
    // one shares its time with another message.
    rows.push(row(3000, start + 100 * 60_000 + 30_000), row(3001, start + 110 * 60_000));
    for (let i = 0; i < rows.length; i += 500) await db('messages').insert(rows.slice(i, i + 500));
    const inRange = async (after: number, before: number) =>
      (
        await db('messages')
          .where({ workspace_id: ws.id })
          .where('created_at', '>=', after)
          .where('created_at', '<', before)
          .orderBy([
            { column: 'created_at', order: 'desc' },
            { column: 'id', order: 'desc' },
          ])
          .select('id')
      ).map((r: { id: number }) => r.id);
    const after = start + 90 * 60_000;
    const before = start + 130 * 60_000;
    const expected = await inRange(after, before);
    expect(expected).toHaveLength(42);
    const query = `created_after=${new Date(after).toISOString()}&created_before=${new Date(before).toISOString()}`;
    for (const limit of [1, 5, 15, 100]) {
      const seen: number[] = [];
      let cursor: string | null = null;
      do {
        const page = await search(`${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
        seen.push(...page.data.map((m) => m.id));
        cursor = page.next_cursor;
      } while (cursor);
      expect(seen, `limit ${limit}`).toStrictEqual(expected);
    }
    // The late message sits at its time, not first as its id would put it.
    const lateId = (await db('messages').where({ subject: 'Bulk 3000' }).first('id')).id;
    expect(expected[0]).not.toBe(lateId);
    // After the 29 messages of minutes 101 to 129 and the one sharing minute 110.
    expect(expected.indexOf(lateId)).toBe(30);
    // A range with nothing in it, one older than every message, and one open at the end.
    expect(await ids(`created_after=${new Date(start + 30_000).toISOString()}&created_before=${new Date(start + 50_000).toISOString()}`)).toStrictEqual([]);
    expect(await ids(`created_before=${new Date(start).toISOString()}`)).toStrictEqual([]);
    expect(await ids(`created_before=${new Date(start + 60_000).toISOString()}`)).toStrictEqual(await inRange(0, start + 60_000));
    expect(await ids(`created_after=${new Date(start + 2990 * 60_000).toISOString()}`)).toStrictEqual(await inRange(start + 2990 * 60_000, start + 10_000 * 60_000));
  });

  it('answers 422 naming the parameter for a malformed search, and for parameters it does not know', async () => {
    const { server, ws } = await world(kind);
    const refusals: [string, string][] = [
      ['x=1', 'Unknown query parameter `x`'],
      ['metadatax=1', 'Unknown query parameter `metadatax`'],
      ['metadata.bad!key=1', 'Query parameter `metadata.bad!key`: metadata keys are 1-64 letters, digits, _ or -'],
      ['metadata.=1', 'Query parameter `metadata.`: metadata keys are 1-64 letters, digits, _ or -'],
      ['metadata.user=a&metadata.user=b', 'Query parameter `metadata.user` must be a string'],
      [`metadata.user=${'v'.repeat(257)}`, 'Query parameter `metadata.user` has a value longer than 256 characters'],
      ['tag=bad%20name:x', 'Query parameter `tag` must be `name` or `name:value`, the name 1-64 letters, digits, _ or -'],
      ['tag=:x', 'Query parameter `tag` must be `name` or `name:value`, the name 1-64 letters, digits, _ or -'],
      [Array.from({ length: 11 }, (_, i) => `tag=t${i}`).join('&'), 'Query parameter `tag` is given 11 times; at most 10'],
      ['from=not-an-address', 'Query parameter `from` must be an address: it is not of the form local@domain'],
      ['subject=', 'Query parameter `subject` must not be empty'],
      ['created_after=yesterday', 'Query parameter `created_after` must be an ISO 8601 timestamp with a time zone offset, e.g. 2026-11-21T10:00:00Z'],
      ['created_after=2026-11-21T10:00:00', 'Query parameter `created_after` must be an ISO 8601 timestamp with a time zone offset, e.g. 2026-11-21T10:00:00Z'],
      ['created_before=2026-02-30T10:00:00Z', 'Query parameter `created_before` must be an ISO 8601 timestamp with a time zone offset, e.g. 2026-11-21T10:00:00Z'],
      ['created_before=2026-11-21T24:00:00Z', 'Query parameter `created_before` must be an ISO 8601 timestamp with a time zone offset, e.g. 2026-11-21T10:00:00Z'],
      ['created_before=2026-11-21T10:00:00%2B25:00', 'Query parameter `created_before` must be an ISO 8601 timestamp with a time zone offset, e.g. 2026-11-21T10:00:00Z'],
    ];
    for (const [query, error] of refusals) {
      const res = await server.api('GET', `/emails?${query}`, { key: ws.apiKey });
      expect(res.status, query).toBe(422);
      expect(res.body, query).toStrictEqual({ error });
    }
  });

  it('returns a message’s tags and metadata, and still finds it by them once retention dropped its body', async () => {
    const { server, ws, clock, send, ids } = await world(kind);
    const tags = [
      { name: 'kind', value: 'welcome' },
      { name: 'kind', value: 'welcome' },
      { name: 'ab-test', value: 'b' },
    ];
    const m = await send({ subject: 'Welcome', tags, metadata: { user: 'u-42', plan: 'pro' } });
    const got = await server.api('GET', `/emails/${m.id}`, { key: ws.apiKey });
    expect(got.body.tags).toStrictEqual(tags);
    expect(got.body.metadata).toStrictEqual({ user: 'u-42', plan: 'pro' });
    const listed = await server.api('GET', '/emails?tag=ab-test:b', { key: ws.apiKey });
    expect(listed.body.data[0]).toMatchObject({ id: m.id, tags, metadata: { user: 'u-42', plan: 'pro' } });

    // Retention keeps a finished message's row (subject, recipients) and drops its body: its
    // labels stay, so searches find it as before.
    await server.services.db('recipients').where({ message_id: m.id }).update({ status: 'delivered' });
    await server.services.db('messages').where({ id: m.id }).update({ status: 'delivered' });
    clock.advance(31 * 86_400_000);
    const pruned = await pruneRetained(server.services.db, clock.now(), 30);
    expect(pruned.messageBodies).toBe(1);
    expect((await server.api('GET', `/emails/${m.id}/content`, { key: ws.apiKey })).body.available).toBe(false);
    expect(await ids('tag=kind:welcome&metadata.plan=pro&subject=welc')).toStrictEqual([m.id]);
  });
});
