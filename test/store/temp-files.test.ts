import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../src/store/db.ts';
import { openFileTargets } from '../helpers/fds.ts';

const dirs: string[] = [];
const dbs: Db[] = [];
afterEach(async () => {
  await Promise.all(dbs.splice(0).map((db) => db.destroy()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Files this process holds open that SQLite made for temporary data (named `etilqs_*`, deleted once opened). */
const sqliteTempFiles = (): string[] => openFileTargets().filter((target) => /\/etilqs_/.test(target));

describe('SQLite temporary data', () => {
  it('a shared commit whose savepoints change hundreds of kilobytes keeps their journal in memory, not in a temporary file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailsvc-temp-'));
    dirs.push(dir);
    const db = createDb({ client: 'sqlite', connection: { filename: join(dir, 'mailsvc.sqlite') }, pool: 1 });
    dbs.push(db);
    await db.schema.createTable('notes', (t) => {
      t.increments('id');
      t.text('body');
    });
    await db('notes').insert(Array.from({ length: 200 }, () => ({ body: 'a'.repeat(2000) })));
    const seen = await db.transaction(async (tx) => {
      // As the group committer runs each job: in a savepoint of the shared transaction.
      for (const letter of ['b', 'c', 'd']) {
        await tx.raw('savepoint group_job');
        await tx('notes').update({ body: letter.repeat(2000) });
        await tx.raw('release savepoint group_job');
      }
      return sqliteTempFiles();
    });
    expect(seen).toStrictEqual([]);
    expect(await db('notes').distinct('body').pluck('body')).toStrictEqual(['d'.repeat(2000)]);
  });
});
