import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import { createDb } from '../../src/store/db.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

// The CLI writes to the SQLite file of a running server. A transaction that read before its first
// write used to take the write lock only then, and failed at once (SQLITE_BUSY, no waiting) when
// the other process held it or had committed since the read: `workspace create` beside a running
// `serve` failed so, once, in the quick start test.
it('holds the SQLite write lock from the start of a transaction, so another process waits for it instead of slipping in', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mailsvc-lock-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'mailsvc.sqlite');
  const db = createDb({ client: 'sqlite', connection: { filename: file }, pool: 1 });
  cleanups.push(() => db.destroy());
  await db.schema.createTable('workspaces', (t) => {
    t.increments('id');
    t.string('name').unique();
  });
  // A second connection, as another process opens one, told not to wait: the lock shows as an error.
  const other = new Database(file);
  cleanups.push(() => other.close());
  other.pragma('busy_timeout = 0');
  const insertOther = other.prepare("insert into workspaces (name) values ('other')");

  const created = await db.transaction(async (tx) => {
    const existing = await tx('workspaces').where({ name: 'acme' }).first();
    expect(() => insertOther.run()).toThrow(expect.objectContaining({ code: 'SQLITE_BUSY' }));
    await tx('workspaces').insert({ name: 'acme' });
    return existing === undefined;
  });
  expect(created).toBe(true);

  insertOther.run();
  expect(await db('workspaces').orderBy('id').pluck('name')).toStrictEqual(['acme', 'other']);
});
