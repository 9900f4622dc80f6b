import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createDb, durability, type Db } from '../../src/store/db.ts';
import { WalSync, walSyncsCompleted } from '../../src/store/wal-sync.ts';

const dirs: string[] = [];
const dbs: Db[] = [];
afterEach(async () => {
  await Promise.all(dbs.splice(0).map((db) => db.destroy()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailsvc-wal-'));
  dirs.push(dir);
  return dir;
}

describe('WAL sync', () => {
  it('makes a caller that arrives during a sync wait for the next one, shared by everyone who arrived meanwhile', async () => {
    const dir = scratchDir();
    writeFileSync(join(dir, 'db-wal'), 'frames');
    const wal = new WalSync(join(dir, 'db-wal'), join(dir, 'db'));
    const start = walSyncsCompleted();
    const seen: number[] = [];
    const first = wal.durable().then(() => seen.push(walSyncsCompleted() - start));
    const second = wal.durable().then(() => seen.push(walSyncsCompleted() - start));
    const third = wal.durable().then(() => seen.push(walSyncsCompleted() - start));
    await Promise.all([first, second, third]);
    // The first sync may have begun before the later callers' writes: they need the second.
    expect(seen).toStrictEqual([1, 2, 2]);
    expect(walSyncsCompleted() - start).toBe(2);
  });

  it('syncs the database file itself when there is no WAL file yet', async () => {
    const dir = scratchDir();
    writeFileSync(join(dir, 'db'), 'pages');
    const start = walSyncsCompleted();
    await new WalSync(join(dir, 'db-wal'), join(dir, 'db')).durable();
    expect(walSyncsCompleted() - start).toBe(1);
  });

  it('holds back every write to a SQLite file until its WAL is synced, and only writes', async () => {
    const db = createDb({ client: 'sqlite', connection: { filename: join(scratchDir(), 'mailsvc.sqlite') }, pool: 1 });
    dbs.push(db);
    await db.schema.createTable('notes', (t) => {
      t.increments('id');
      t.string('text');
    });
    expect(await db.transaction((tx) => durability(tx))).toBe('full');

    let start = walSyncsCompleted();
    await db('notes').insert({ text: 'alone' });
    expect(walSyncsCompleted() - start).toBe(1);

    start = walSyncsCompleted();
    await db.transaction(async (tx) => {
      await tx('notes').insert({ text: 'one' });
      await tx('notes').insert({ text: 'two' });
      expect(walSyncsCompleted() - start).toBe(0);
    });
    expect(walSyncsCompleted() - start).toBe(1);

    start = walSyncsCompleted();
    const read = await db.transaction((tx) => tx('notes').count({ n: '*' }).first());
    await db('notes').where({ id: 1 }).first();
    expect(read).toStrictEqual({ n: 3 });
    expect(walSyncsCompleted() - start).toBe(0);

    start = walSyncsCompleted();
    await db
      .transaction((tx) =>
        tx('notes')
          .insert({ text: 'undone' })
          .then(() => Promise.reject(new Error('undo'))),
      )
      .catch(() => undefined);
    expect(walSyncsCompleted() - start).toBe(0);
    expect(await db('notes').count({ n: '*' }).first()).toStrictEqual({ n: 3 });
  });
});
