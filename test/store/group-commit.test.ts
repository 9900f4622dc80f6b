import { describe, expect, it } from 'vitest';
import { inTransaction, type Db } from '../../src/store/db.ts';
import { GroupCommitter } from '../../src/store/groupCommit.ts';
import { openStore } from '../helpers/db.ts';
import { STORES, type StoreKind } from '../helpers/stores.ts';

async function counters(kind: StoreKind): Promise<{ open(): Db }> {
  const { open } = await openStore(kind);
  const first = open();
  await first.schema.createTable('counters', (t) => {
    t.integer('id').primary();
    t.integer('v').notNullable();
  });
  await first('counters').insert([
    { id: 1, v: 0 },
    { id: 2, v: 0 },
  ]);
  return { open };
}

function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe.each(STORES)('group commit (%s)', (kind) => {
  it('shares commits among concurrent jobs and rolls back only the job that fails', async () => {
    const { open } = await counters(kind);
    const db = open();
    const committer = new GroupCommitter(db);
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) =>
        committer.run(async (tx) => {
          await tx('counters').where({ id: 1 }).increment('v', 1);
          if (i === 7) throw new Error('job 7 refuses');
          return i;
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(49);
    expect(results[7]).toMatchObject({ status: 'rejected', reason: { message: 'job 7 refuses' } });
    expect((await db('counters').where({ id: 1 }).first()).v).toBe(49);
    const { commits, jobs } = committer.stats();
    expect(jobs).toBe(49);
    expect(commits).toBeLessThan(10);
  });
});

describe.each(STORES)('a job alone in its commit (%s)', (kind) => {
  it('runs without a savepoint, the commit hook after it in one, and leaves both undone when the job fails', async () => {
    const { open } = await counters(kind);
    const db = open();
    const committer = new GroupCommitter(db);
    const told = { committed: 0, failed: 0 };
    committer.setCommitHook({
      due: () => true,
      run: async (tx) => {
        await tx('counters').where({ id: 2 }).increment('v', 1);
        return { committed: () => told.committed++, failed: () => told.failed++ };
      },
    });
    const seen: string[] = [];
    db.on('query', (q: { sql: string }) => seen.push(q.sql.trim().split(/\s+/)[0]!.toLowerCase()));
    await committer.run((tx) => tx('counters').where({ id: 1 }).increment('v', 1));
    expect(seen).toStrictEqual(['begin;', 'update', 'savepoint', 'update', 'release', 'commit;']);
    const failing = committer.run(async (tx) => {
      await tx('counters').where({ id: 1 }).increment('v', 10);
      throw new Error('job refuses');
    });
    await expect(failing).rejects.toThrow('job refuses');
    expect((await db('counters').orderBy('id').select('v')).map((r) => r.v)).toStrictEqual([1, 1]);
    expect(told).toStrictEqual({ committed: 1, failed: 0 });
  });
});

describe.each(STORES)('a commit hook with nothing to do (%s)', (kind) => {
  it('costs the commit no statement, alone or shared, and runs again once due', async () => {
    const { open } = await counters(kind);
    const db = open();
    const committer = new GroupCommitter(db);
    let due = false;
    committer.setCommitHook({
      due: () => due,
      run: async (tx) => {
        await tx('counters').where({ id: 2 }).increment('v', 1);
        return { committed: () => undefined, failed: () => undefined };
      },
    });
    const seen: string[] = [];
    db.on('query', (q: { sql: string }) => seen.push(q.sql.trim().split(/\s+/)[0]!.toLowerCase()));
    const bump = () => committer.run((tx) => tx('counters').where({ id: 1 }).increment('v', 1));
    await bump();
    expect(seen).toStrictEqual(['begin;', 'update', 'commit;']);
    seen.length = 0;
    await Promise.all([bump(), bump()]);
    expect(seen).toStrictEqual(['begin;', 'savepoint', 'update', 'release', 'savepoint', 'update', 'release', 'commit;']);
    due = true;
    await bump();
    expect((await db('counters').orderBy('id').select('v')).map((r) => r.v)).toStrictEqual([4, 1]);
  });
});

describe.each(STORES)('lingering while busy (%s)', (kind) => {
  it('lets a batch that queued during a commit wait for later jobs, and commits a job at an idle committer at once', async () => {
    const { open } = await counters(kind);
    const db = open();
    const committer = new GroupCommitter(db, undefined, 1, 200);
    const bump = () => committer.run(async (tx) => tx('counters').where({ id: 1 }).increment('v', 1));
    const release = latch();
    // A commits alone (idle); B queues while A commits; C comes two turns of the loop after A.
    const a = committer.run(async (tx) => {
      await release.opened;
      return tx('counters').where({ id: 1 }).increment('v', 1);
    });
    await new Promise((resolve) => setImmediate(resolve));
    const b = bump();
    let c: Promise<unknown> | null = null;
    const cQueued = new Promise<void>(
      (resolve) =>
        void a.then(() =>
          setImmediate(() =>
            setImmediate(() => {
              c = bump();
              resolve();
            }),
          ),
        ),
    );
    release.open();
    await Promise.all([a, b, cQueued]);
    // Assigned in a callback, which tsc's narrowing does not see.
    await (c as Promise<unknown> | null);
    // B waited for C: two commits for three jobs, where committing B at once would take three.
    expect(committer.stats()).toStrictEqual({ commits: 2, jobs: 3 });
    expect((await db('counters').where({ id: 1 }).first()).v).toBe(3);
  });
});

describe.each(STORES)('jobs of their own (%s)', (kind) => {
  it('gives such a job the database, not a shared transaction, while the others wait for its lane and then commit together', async () => {
    const { open } = await counters(kind);
    const db = open();
    const committer = new GroupCommitter(db);
    const release = latch();
    const inside: boolean[] = [];
    const own = committer.runOwn(async (conn) => {
      inside.push((conn as { isTransaction?: boolean }).isTransaction === true);
      await release.opened;
      await conn('counters').where({ id: 1 }).increment('v', 10);
      return 'own';
    });
    const shared = Array.from({ length: 5 }, (_, i) => committer.run(async (tx) => (await tx('counters').where({ id: 2 }).increment('v', 1), i)));
    release.open();
    expect(await own).toBe('own');
    expect(await Promise.all(shared)).toStrictEqual([0, 1, 2, 3, 4]);
    expect(inside).toStrictEqual([false]);
    expect((await db('counters').orderBy('id').select('v')).map((r) => r.v)).toStrictEqual([10, 5]);
    // The own job, then one shared commit for the five that queued behind it.
    expect(committer.stats()).toStrictEqual({ commits: 2, jobs: 6 });
  });

  it('fails a job of its own alone, leaving the jobs behind it to commit', async () => {
    const { open } = await counters(kind);
    const db = open();
    const committer = new GroupCommitter(db);
    const own = committer.runOwn(async () => {
      throw new Error('own job refuses');
    });
    const after = committer.run(async (tx) => (await tx('counters').where({ id: 1 }).increment('v', 1), 'after'));
    await expect(own).rejects.toThrow('own job refuses');
    expect(await after).toBe('after');
    expect((await db('counters').where({ id: 1 }).first()).v).toBe(1);
  });
});

describe.each(STORES)('jobs that make their writes atomic themselves (%s)', (kind) => {
  it('share the commit on SQLite (one WAL sync) and run on their own on PostgreSQL (no BEGIN and COMMIT)', async () => {
    const { open } = await counters(kind);
    const db = open();
    const committer = new GroupCommitter(db);
    const given: boolean[] = [];
    const bump = (id: number) => committer.run(async (tx) => void (await tx('counters').where({ id }).increment('v', 1)));
    const jobs = [
      bump(2),
      committer.runOwnIfCheaper(async (conn) => {
        given.push(inTransaction(conn));
        await conn('counters').where({ id: 1 }).increment('v', 10);
        return 'own';
      }),
      bump(2),
    ];
    expect(await Promise.all(jobs)).toStrictEqual([undefined, 'own', undefined]);
    expect(given).toStrictEqual([kind === 'sqlite']);
    expect((await db('counters').orderBy('id').select('v')).map((r) => r.v)).toStrictEqual([10, 2]);
    expect(committer.stats()).toStrictEqual({ commits: kind === 'sqlite' ? 1 : 2, jobs: 3 });
  });
});

describe.runIf(STORES.includes('pg'))('group commit across processes (pg)', () => {
  it('runs a deadlock victim again on its own instead of failing it', async () => {
    const { open } = await counters('pg');
    const a = new GroupCommitter(open());
    const b = new GroupCommitter(open());
    const aHolds = latch();
    const bHolds = latch();
    // Two batches lock the same rows in opposite orders: PostgreSQL aborts one of them.
    const jobA = a.run(async (tx) => {
      await tx('counters').where({ id: 1 }).increment('v', 1);
      aHolds.open();
      await bHolds.opened;
      await tx('counters').where({ id: 2 }).increment('v', 1);
      return 'a';
    });
    const jobB = b.run(async (tx) => {
      await tx('counters').where({ id: 2 }).increment('v', 1);
      bHolds.open();
      await aHolds.opened;
      await tx('counters').where({ id: 1 }).increment('v', 1);
      return 'b';
    });
    expect(await Promise.all([jobA, jobB])).toStrictEqual(['a', 'b']);
    const rows = await open()('counters').orderBy('id').select('v');
    expect(rows.map((r: { v: number }) => r.v)).toStrictEqual([2, 2]);
  });
});

describe.runIf(STORES.includes('pg'))('group commit lanes (pg)', () => {
  it('with three lanes, three transactions are open at once: a job may wait for others that arrived after it', async () => {
    const { open } = await counters('pg');
    const db = open();
    const committer = new GroupCommitter(db, 256, 3);
    const all = latch();
    const jobs: Promise<number>[] = [];
    // Each job is submitted once the one before it runs, and waits until all three run: with
    // one lane the second would queue behind the first forever.
    for (const n of [1, 2, 3]) {
      const running = latch();
      jobs.push(
        committer.run(async (tx) => {
          await tx('counters').insert({ id: 10 + n, v: n });
          running.open();
          if (n === 3) all.open();
          await all.opened;
          return n;
        }),
      );
      await running.opened;
    }
    expect(await Promise.all(jobs)).toStrictEqual([1, 2, 3]);
    expect(committer.stats()).toStrictEqual({ commits: 3, jobs: 3 });
    expect(await db('counters').where('id', '>', 10).orderBy('id').pluck('v')).toStrictEqual([1, 2, 3]);
  });
});

describe.each(STORES)('group commit ordering (%s)', (kind) => {
  it('a job asking to run last runs after the others of its shared commit, which keep their order', async () => {
    const { open } = await counters(kind);
    const db = open();
    const committer = new GroupCommitter(db);
    const order: string[] = [];
    const job = (name: string) => async () => {
      order.push(name);
      return name;
    };
    // Queued in one turn, so the four share one commit.
    const results = await Promise.all([committer.run(job('a')), committer.run(job('usage'), { last: true }), committer.run(job('b')), committer.run(job('c'))]);
    expect(results).toStrictEqual(['a', 'usage', 'b', 'c']);
    expect(order).toStrictEqual(['a', 'b', 'c', 'usage']);
    expect(committer.stats()).toStrictEqual({ commits: 1, jobs: 4 });
  });
});
