import type { Knex } from 'knex';
import { describe, expect, it } from 'vitest';
import { prepareMessage, unsignedCopy } from '../../src/delivery/compose.ts';
import { readContent } from '../../src/messages/content.ts';
import { source } from '../../src/store/migrate.ts';
import { messagesRepo } from '../../src/store/messages.ts';
import { openStore } from '../helpers/db.ts';
import { STORES } from '../helpers/stores.ts';

const AT = 1_700_000_000_000;
const MIME = 'From: a@acme.test\r\nTo: b@dest.test\r\nSubject: bytes\r\n\r\n8-bit: \xe9\xff and a line\r\n';

const completedNames = async (db: Knex) => {
  const [completed] = (await db.migrate.list({ migrationSource: source })) as [({ name: string } | string)[], unknown[]];
  return completed.map((m) => (typeof m === 'string' ? m : m.name));
};

const RAW = '024_message_raw';

/** Migrations undone one by one, newest first, until this one has been undone. */
async function downThroughRaw(db: Knex): Promise<void> {
  while ((await completedNames(db)).includes(RAW)) await db.migrate.down({ migrationSource: source });
}

async function insertMessage(db: Knex, n: number): Promise<number> {
  const [ws] = await db('workspaces')
    .insert({ name: `w${n}`, plan: 'free', rate_per_minute: 10, rate_per_hour: 100, created_at: AT })
    .returning('id');
  const [id] = await db('messages')
    .insert({
      workspace_id: typeof ws === 'object' ? ws.id : ws,
      api_key_id: null,
      domain: 'acme.test',
      stream: 'transactional',
      status: 'queued',
      source: 'smtp',
      from_header: 'a@acme.test',
      from_address: 'a@acme.test',
      subject: 'bytes',
      envelope: JSON.stringify({ to: ['b@dest.test'], cc: [], bcc: [], reply_to: [], tags: [] }),
      message_id_header: `<${n}@acme.test>`,
      created_at: AT,
      scheduled_at: null,
    })
    .returning('id');
  return typeof id === 'object' ? id.id : id;
}

describe.each(STORES)('submitted MIME kept as bytes (%s)', (kind) => {
  it('reads and sends a body stored as base64 before the change, and going back folds the bytes into the JSON', async () => {
    const { open } = await openStore(kind);
    const db = open();
    await db.migrate.latest({ migrationSource: source });
    expect(await completedNames(db)).toContain(RAW);
    await downThroughRaw(db);
    const before = await insertMessage(db, 1);
    await db('message_contents').insert({ message_id: before, content: JSON.stringify({ kind: 'mime', raw: Buffer.from(MIME, 'latin1').toString('base64') }) });

    await db.migrate.latest({ migrationSource: source });
    const after = await insertMessage(db, 2);
    await db('message_contents').insert({ message_id: after, content: '{"kind":"mime"}', raw: Buffer.from(MIME, 'latin1') });

    for (const id of [before, after]) {
      const row = (await messagesRepo.byId(db, id))!;
      const content = readContent(row.content, row.raw);
      expect(content?.kind === 'mime' && content.raw.toString('latin1')).toBe(MIME);
      // What delivery builds from it: the submitted bytes, Feedback-ID added to the header.
      const copy = unsignedCopy(await prepareMessage(row, 'mx.acme.test')).toString('latin1');
      expect(copy).toMatch(/^From: a@acme\.test\r\nTo: b@dest\.test\r\nSubject: bytes\r\nFeedback-ID: [^\r]+\r\n\r\n8-bit: \xe9\xff and a line\r\n$/);
    }
    expect((await messagesRepo.byId(db, before))!.raw).toBeNull();

    await downThroughRaw(db);
    const rows = await db('message_contents').orderBy('message_id').select('*');
    expect(rows.map((r: Record<string, unknown>) => Object.keys(r).sort())).toStrictEqual([
      ['content', 'message_id'],
      ['content', 'message_id'],
    ]);
    for (const r of rows as { content: string }[]) expect(Buffer.from(JSON.parse(r.content).raw, 'base64').toString('latin1')).toBe(MIME);
  });

  it('a MIME row without its bytes is an error, not an empty message', () => {
    expect(() => readContent('{"kind":"mime"}', null)).toThrow('stored MIME content has no bytes');
  });
});
