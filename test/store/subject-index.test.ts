import type { Knex } from 'knex';
import { describe, expect, it, vi } from 'vitest';
import { source } from '../../src/store/migrate.ts';
import { messagesRepo } from '../../src/store/messages.ts';
import { subjectIndex } from '../../src/store/subject-index.ts';
import { migratedStore } from '../helpers/db.ts';
import { startTestServer } from '../helpers/server.ts';

const AT = 1_700_000_000_000;
const BATCHES = '025_subject_index_batches';

async function workspace(db: Knex): Promise<number> {
  const [ws] = await db('workspaces').insert({ name: 'w', plan: 'free', rate_per_minute: 10, rate_per_hour: 100, created_at: AT }).returning('id');
  return typeof ws === 'object' ? ws.id : ws;
}

/** Messages with these subjects, inserted as the store does (one statement); their ids in order. */
async function store(db: Knex, workspaceId: number, subjects: string[]): Promise<number[]> {
  const rows = subjects.map((subject, i) => ({
    workspace_id: workspaceId,
    api_key_id: null,
    domain: 'acme.test',
    stream: 'transactional',
    status: 'queued',
    source: 'api',
    from_header: 'news@acme.test',
    from_address: 'news@acme.test',
    subject,
    envelope: JSON.stringify({ to: ['u@example.org'], cc: [], bcc: [], reply_to: [], tags: [] }),
    message_id_header: `<${subject.length}.${i}.${Math.random()}@acme.test>`,
    created_at: AT + i,
    scheduled_at: null,
  }));
  return (await db('messages').insert(rows).returning('id')).map((r: number | { id: number }) => (typeof r === 'object' ? r.id : r));
}

/** Rows the index itself holds for a phrase, without the catch-up a search does first. */
const indexed = async (db: Knex, phrase: string): Promise<number[]> =>
  (await db.raw('select rowid from message_subjects where message_subjects match ? order by rowid', [`"${phrase}"`])).map((r: { rowid: number }) => r.rowid);

/** FTS5's own check of the index against the messages' subjects; throws when they differ. */
const checkIndex = (db: Knex) => db.raw("insert into message_subjects (message_subjects, rank) values ('integrity-check', 1)");

const upto = async (db: Knex): Promise<number> => (await db('message_subjects_upto').first('id')).id;

const search = (db: Knex, workspaceId: number, subject: string) => messagesRepo.list(db, { workspaceId, subject, limit: 50 }).then((rows) => rows.map((r) => r.id));

describe('the subject search index, written in batches (sqlite)', () => {
  it('finds a message by subject the moment it is stored, indexing what waits before the search reads', async () => {
    const { db } = await migratedStore('sqlite');
    const ws = await workspace(db);
    const [welcome, receipt] = await store(db, ws, ['Welcome to Acme', 'Your receipt #1001']);
    expect(await indexed(db, 'welcome')).toStrictEqual([]);
    expect(await subjectIndex.pending(db)).toBe(true);

    expect(await search(db, ws, 'elcome')).toStrictEqual([welcome]);
    expect(await indexed(db, 'receipt')).toStrictEqual([receipt]);
    expect(await subjectIndex.pending(db)).toBe(false);
    expect(await upto(db)).toBe(receipt);
    await checkIndex(db);
  });

  it('indexes at most a batch at a time, oldest first, and a second writer never indexes a message again', async () => {
    const { db, open } = await migratedStore('sqlite');
    const ws = await workspace(db);
    const ids = await store(db, ws, ['one order', 'two orders', 'three orders', 'four orders', 'five orders']);
    expect(await db.transaction((tx) => subjectIndex.indexPending(tx, 2))).toBe(2);
    expect(await upto(db)).toBe(ids[1]);
    expect(await indexed(db, 'order')).toStrictEqual(ids.slice(0, 2));
    expect(await db.transaction((tx) => subjectIndex.indexPending(tx, 2))).toBe(2);
    expect(await db.transaction((tx) => subjectIndex.indexPending(tx, 2))).toBe(1);
    expect(await db.transaction((tx) => subjectIndex.indexPending(tx, 2))).toBe(0);
    expect(await indexed(db, 'order')).toStrictEqual(ids);

    // A server and a CLI command, each with its own connection: the mark is read and moved under
    // the write lock, so the second finds nothing left.
    const more = await store(db, ws, ['six orders', 'seven orders', 'eight orders']);
    const [a, b] = [open(), open()];
    await subjectIndex.catchUp(a);
    expect(await b.transaction((tx) => subjectIndex.indexPending(tx))).toBe(0);
    await subjectIndex.catchUp(b);
    expect(await indexed(db, 'order')).toStrictEqual([...ids, ...more]);
    await checkIndex(db);
  });

  it('keeps the index whole when messages go, indexed or not', async () => {
    const { db } = await migratedStore('sqlite');
    const ws = await workspace(db);
    const [first, second, third] = await store(db, ws, ['first sale', 'second sale', 'third sale']);
    await db.transaction((tx) => subjectIndex.indexPending(tx, 2));
    // One indexed, one not yet: FTS5 must be told of the first and never of the third.
    await db('messages').whereIn('id', [first!, third!]).delete();
    await checkIndex(db);
    expect(await search(db, ws, 'sale')).toStrictEqual([second]);
    await checkIndex(db);
  });

  it('is taken over from the trigger for messages stored before, and going back indexes what waits', async () => {
    const { db } = await migratedStore('sqlite');
    while ((await db.migrate.list({ migrationSource: source }))[0].some((m: { name: string } | string) => (typeof m === 'string' ? m : m.name) === BATCHES)) {
      await db.migrate.down({ migrationSource: source });
    }
    const ws = await workspace(db);
    const before = await store(db, ws, ['stored before', 'also stored before']);
    expect(await indexed(db, 'before')).toStrictEqual(before);

    await db.migrate.latest({ migrationSource: source });
    const triggers = async () => (await db.raw("select name from sqlite_master where type = 'trigger' order by name")).map((r: { name: string }) => r.name);
    expect(await triggers()).toStrictEqual(['messages_subject_delete']);
    expect(await upto(db)).toBe(before[1]);
    const after = await store(db, ws, ['stored after']);
    expect(await indexed(db, 'stored')).toStrictEqual(before);

    await db.migrate.down({ migrationSource: source });
    expect(await triggers()).toStrictEqual(['messages_subject_delete', 'messages_subject_insert']);
    expect(await indexed(db, 'stored')).toStrictEqual([...before, ...after]);
    await checkIndex(db);
    await db.migrate.latest({ migrationSource: source });
    expect(await upto(db)).toBe(after[0]);
  });

  it('is written by the server on its own while it runs', async () => {
    const server = await startTestServer('sqlite');
    const ws = await server.workspace('subjects');
    await server.verifiedDomain(ws.id, 'acme.test');
    const res = await server.api('POST', '/emails', {
      key: ws.apiKey,
      body: { from: 'news@acme.test', to: 'user@example.org', subject: 'Indexed by the server', text: 'Hi' },
    });
    expect(res.status, res.text).toBe(201);
    const db = server.services.db;
    await vi.waitFor(async () => expect(await indexed(db, 'by the server')).toStrictEqual([res.body.id]), { timeout: 10_000, interval: 100 });
    expect(await subjectIndex.pending(db)).toBe(false);
    await checkIndex(db);
  });
});
