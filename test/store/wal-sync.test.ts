import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BatcherClosedError } from '../../src/core/batcher.ts';
import { createDb, durability, type Db } from '../../src/store/db.ts';
import { WalSync, walSyncsCompleted } from '../../src/store/wal-sync.ts';
import { openFileTargets } from '../helpers/fds.ts';

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

/** This process's open file descriptors on `file`, deleted or not. */
const handlesOn = (file: string): number => openFileTargets().filter((target) => target.replace(/ \(deleted\)$/, '') === file).length;

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

  it('waits for no sync after writes that changed no row, alone or in a transaction, but does after schema changes', async () => {
    const db = createDb({ client: 'sqlite', connection: { filename: join(scratchDir(), 'mailsvc.sqlite') }, pool: 1 });
    dbs.push(db);
    let start = walSyncsCompleted();
    await db.schema.createTable('notes', (t) => {
      t.increments('id');
      t.string('text').unique();
    });
    expect(walSyncsCompleted() - start).toBeGreaterThan(0);
    await db('notes').insert({ text: 'kept' });

    start = walSyncsCompleted();
    await db('notes').where({ text: 'absent' }).update({ text: 'changed' });
    await db('notes').where({ text: 'absent' }).delete();
    await db('notes').insert({ text: 'kept' }).onConflict('text').ignore();
    await db.transaction(async (tx) => {
      await tx('notes').where({ text: 'absent' }).update({ text: 'changed' });
      await tx('notes').insert({ text: 'kept' }).onConflict('text').ignore().returning('id');
    });
    expect(walSyncsCompleted() - start).toBe(0);

    await db.transaction(async (tx) => {
      await tx('notes').where({ text: 'absent' }).update({ text: 'changed' });
      await tx('notes').where({ text: 'kept' }).update({ text: 'changed' });
    });
    expect(walSyncsCompleted() - start).toBe(1);
    expect(await db('notes').pluck('text')).toStrictEqual(['changed']);
  });

  it('keeps one handle on the WAL however many commits it syncs, and lets it go when the database closes', async () => {
    const file = join(scratchDir(), 'mailsvc.sqlite');
    const db = createDb({ client: 'sqlite', connection: { filename: file }, pool: 1 });
    await db.schema.createTable('notes', (t) => {
      t.increments('id');
      t.string('text');
    });
    await db('notes').insert({ text: 'first' });
    const afterOne = handlesOn(`${file}-wal`);
    const start = walSyncsCompleted();
    for (let i = 0; i < 20; i++) await db('notes').insert({ text: `note ${i}` });
    expect(walSyncsCompleted() - start).toBe(20);
    expect(handlesOn(`${file}-wal`)).toBe(afterOne);

    await db.destroy();
    expect(handlesOn(`${file}-wal`)).toBe(0);
  });

  it('finishes a sync under way before it closes, and refuses syncs after', async () => {
    const dir = scratchDir();
    writeFileSync(join(dir, 'db-wal'), 'frames');
    const wal = new WalSync(join(dir, 'db-wal'), join(dir, 'db'));
    await wal.durable();
    const start = walSyncsCompleted();
    const pending = wal.durable();
    await wal.close();
    await pending;
    expect(walSyncsCompleted() - start).toBe(1);
    expect(handlesOn(join(dir, 'db-wal'))).toBe(0);
    await expect(wal.durable()).rejects.toThrow(BatcherClosedError);
  });
});
