import { describe, expect, it } from 'vitest';
import { openStore } from '../helpers/db.ts';
import { openFileTargets } from '../helpers/fds.ts';

/** Files this process holds open that SQLite made for temporary data (named `etilqs_*`, deleted once opened). */
const sqliteTempFiles = (): string[] => openFileTargets().filter((target) => /\/etilqs_/.test(target));

describe('SQLite temporary data', () => {
  it('a shared commit whose savepoints change hundreds of kilobytes keeps their journal in memory, not in a temporary file', async () => {
    const db = (await openStore('sqlite')).open();
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
