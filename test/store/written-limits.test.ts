import { describe, expect, it } from 'vitest';
import { pickSqlite } from '../../src/store/claim-picks.ts';
import type { Db } from '../../src/store/db.ts';
import { openStore } from '../helpers/db.ts';

async function sqliteDb(): Promise<Db> {
  const db = (await openStore('sqlite')).open();
  await db.schema.createTable('notes', (t) => {
    t.increments('id');
    t.text('body');
  });
  await db('notes').insert(Array.from({ length: 5 }, (_, i) => ({ body: `note ${i}` })));
  return db;
}

// SQLite plans with a bound LIMIT's value, so a statement whose LIMIT is a parameter is compiled
// again every time that parameter is bound, which is on every run. What reaches SQLite must
// carry the limit in its text.
describe('limits on SQLite', () => {
  it('a query with .first() or .limit(n) reaches SQLite with the number in its text, and each limit returns its rows', async () => {
    const db = await sqliteDb();
    const first = db('notes').where('id', '>', 1).first('body').toSQL();
    expect(first.sql).toBe('select `body` from `notes` where `id` > ? limit 1');
    expect(first.bindings).toStrictEqual([1]);
    expect(db('notes').orderBy('id').limit(3).offset(1).toSQL().sql).toBe('select * from `notes` order by `id` asc limit 3 offset ?');

    expect(await db('notes').where('id', '>', 1).orderBy('id').first('body')).toStrictEqual({ body: 'note 1' });
    expect(await db('notes').orderBy('id').limit(3).pluck('body')).toStrictEqual(['note 0', 'note 1', 'note 2']);
    expect(await db('notes').orderBy('id').limit(2).pluck('body')).toStrictEqual(['note 0', 'note 1']);
    expect(await db('notes').orderBy('id').limit(3).pluck('body')).toStrictEqual(['note 0', 'note 1', 'note 2']);
  });

  it("the delivery claim's statement has no LIMIT parameter, shaped or not, and refuses a limit that is not a whole number", () => {
    const plain = pickSqlite({ owner: 'w', now: 1000, leaseMs: 60_000, limit: 50 });
    const shaped = pickSqlite({ owner: 'w', now: 1000, leaseMs: 60_000, limit: 50, shape: { exclude: ['mx:slow'], caps: [['mx:big', 10]], defaultCap: 5 } });
    expect(plain.sql).not.toMatch(/limit \?/);
    expect(plain.sql.match(/limit \d+/g)).toStrictEqual(['limit 50', 'limit 50', 'limit 50', 'limit 50']);
    expect(plain.bindings).toStrictEqual([1000, 1000, 1000]);
    expect(shaped.sql).not.toMatch(/limit \?/);
    expect(shaped.sql.match(/limit \d+/g)).toStrictEqual(['limit 200', 'limit 200', 'limit 200', 'limit 200', 'limit 50']);
    expect(() => pickSqlite({ owner: 'w', now: 1000, leaseMs: 60_000, limit: 2.5 })).toThrow(/whole number/);
  });
});
