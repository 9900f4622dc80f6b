import { Batcher, type Batch } from '../core/batcher.ts';
import { isPg, type Conn, type Db, type Tx } from './db.ts';

interface Job {
  work: (tx: Tx) => Promise<unknown>;
  /** Set for `runOwn`: the job is given the database and makes its writes atomic itself. */
  own?: (db: Db) => Promise<unknown>;
  last: boolean;
}

export interface RunOptions {
  /**
   * Run after the other jobs of its shared commit: for a job whose final write takes a lock
   * every process contends for (a daily usage counter), so the lock is held from that write to
   * the commit, not across the rest of the batch.
   */
  last?: boolean;
}

/** Work a commit hook did in a shared transaction, told whether that transaction held. */
export interface AfterCommit {
  committed(): void;
  failed(): void;
}

export interface CommitHook {
  /** Whether it has anything to do in a commit starting now: if not, it costs that commit nothing. */
  due(): boolean;
  run(tx: Tx): Promise<AfterCommit>;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown; retry: boolean };

/**
 * A conflict with another process rather than a fault of the job: PostgreSQL's deadlock
 * (40P01) and serialization failure (40001), SQLite's busy/locked.
 */
export function isTransientConflict(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return code === '40P01' || code === '40001' || code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
}

/**
 * `work` in a savepoint of `tx`, so that its failure undoes its own writes alone. Plain SQL:
 * knex's nested transactions build a transaction object per job, a measurable share of a busy
 * process's CPU when every commit carries several jobs. Jobs may still nest transactions of
 * their own (knex names its savepoints apart from this one).
 */
async function inSavepoint<T>(tx: Tx, work: (tx: Tx) => Promise<T>): Promise<T> {
  await tx.raw('savepoint group_job');
  let value: T;
  try {
    value = await work(tx);
  } catch (error) {
    await tx.raw('rollback to savepoint group_job');
    await tx.raw('release savepoint group_job');
    throw error;
  }
  await tx.raw('release savepoint group_job');
  return value;
}

/**
 * Group commit: writes that arrive while a transaction is committing are gathered and committed
 * together, so one WAL sync (SQLite: synchronous=NORMAL plus the explicit sync of wal-sync.ts)
 * or one commit round trip (PostgreSQL) serves many requests. Each job runs in a savepoint of its own: one job's failure rolls back
 * only its own writes. A job's promise settles only after the shared commit, so a caller never
 * answers before its data is durable.
 *
 * Sharing a transaction widens the window for lock conflicts between processes on PostgreSQL.
 * A job that loses one (deadlock victim) was rolled back to its savepoint, which also released
 * its locks; it runs again on its own after the batch commits. If the shared transaction fails
 * as a whole, every job runs again on its own.
 */
export class GroupCommitter {
  private readonly batcher: Batcher<Job, unknown>;
  private commits = 0;
  private jobs = 0;
  private hook: CommitHook | null = null;

  constructor(
    private readonly db: Db,
    maxBatch = 256,
    /**
     * Transactions committing side by side; jobs gathered while every lane is busy share the
     * next one. The main committer has one lane on both databases (`commitLanes`, store/db.ts:
     * SQLite has one writer, and on PostgreSQL shared batches side by side deadlocked on message
     * rows); on PostgreSQL accepting has a committer of its own with two (`services.ts`).
     */
    lanes = 1,
    /**
     * While busy (jobs arrived during the last commit), how long the next batch waits for more
     * before it commits: fewer, larger commits. A job arriving at an idle committer commits
     * after one turn of the event loop.
     */
    lingerMs = 0,
  ) {
    this.batcher = new Batcher<Job, unknown>({
      name: 'the group committer',
      maxBatch,
      maxInFlight: lanes,
      // SQLite's driver is synchronous: without yielding to I/O first, requests that arrived
      // during the last commit would still be unparsed and every batch would hold one job.
      start: (busy) => (lingerMs > 0 && busy ? lingerMs : 'immediate'),
      write: (batch) => this.commit(batch),
    });
  }

  run<T>(work: (tx: Tx) => Promise<T>, options: RunOptions = {}): Promise<T> {
    return this.batcher.add({ work, last: options.last ?? false }) as Promise<T>;
  }

  /**
   * A job that makes its own writes atomic (one statement, or a transaction of its own) and so
   * needs no shared transaction: on PostgreSQL that saves the BEGIN and COMMIT round trips. It
   * still takes a lane like any job, so that work arriving meanwhile waits and gathers.
   */
  runOwn<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return this.batcher.add({ work: (tx) => work(tx), own: work, last: false }) as Promise<T>;
  }

  /** Commits what is queued, then refuses new jobs (the process is stopping). */
  close(): Promise<void> {
    return this.batcher.close();
  }

  /**
   * A job that can make its writes atomic itself, run the cheaper way for the database: on
   * PostgreSQL as `runOwn`, given the database (no BEGIN and COMMIT round trips when its writes
   * are one statement); on SQLite, where a transaction costs no round trip but a commit costs a
   * WAL sync, in the shared commit (`run`), given its transaction. A job whose writes need a
   * transaction opens one when it was given none (`inTransaction` tells which it got). `options`
   * apply to the shared commit.
   */
  runOwnIfCheaper<T>(work: (conn: Conn) => Promise<T>, options: RunOptions = {}): Promise<T> {
    return isPg(this.db) ? this.runOwn(work) : this.run(work, options);
  }

  /**
   * Work that rides in shared commits after their jobs, when it is due, in a savepoint of its
   * own (its failure costs the jobs nothing): writes gathered in memory, such as rate-limit
   * counts.
   */
  setCommitHook(hook: CommitHook): void {
    this.hook = hook;
  }

  /** Commits and jobs so far, to see how well commits are shared. */
  stats() {
    return { commits: this.commits, jobs: this.jobs };
  }

  /** One batch: jobs of their own first, then the rest in one shared transaction. */
  private async commit(batch: Batch<Job, unknown>): Promise<void> {
    const taken = batch.take();
    // Stable: jobs keep their order, those asking to run last after the others.
    const order = taken.map((_, i) => i).sort((a, b) => Number(taken[a]!.last) - Number(taken[b]!.last));
    const shared: Pending[] = [];
    for (const i of order) {
      const job = taken[i]!;
      const settle = settler(batch, i);
      if (!job.own) {
        shared.push({ job, settle });
        continue;
      }
      try {
        const value = await job.own(this.db);
        this.commits += 1;
        this.jobs += 1;
        settle.resolve(value);
      } catch (error) {
        settle.reject(error);
      }
    }
    if (shared.length === 0) return;
    const outcomes = await this.runShared(shared.map((p) => p.job));
    if (outcomes === null) return this.runAlone(shared);
    this.commits += 1;
    const again: Pending[] = [];
    shared.forEach((pending, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) {
        this.jobs += 1;
        pending.settle.resolve(outcome.value);
      } else if (outcome.retry) again.push(pending);
      else pending.settle.reject(outcome.error);
    });
    await this.runAlone(again);
  }

  /** Runs the batch in one transaction; null when that transaction failed as a whole. */
  private async runShared(batch: Job[]): Promise<Outcome[] | null> {
    const hook = this.hook?.due() ? (tx: Tx) => this.hook!.run(tx) : null;
    // A job alone needs no savepoint: its failure rolls back nothing else (the commit hook runs
    // after it). Two round trips fewer on PostgreSQL, where a busy process often commits one
    // (batched) job at a time; two statements fewer through knex on SQLite.
    if (batch.length === 1) {
      let failed: Outcome | null = null;
      let after: AfterCommit | null = null;
      try {
        const value = await this.db.transaction(async (tx) => {
          let done: unknown;
          try {
            done = await batch[0].work(tx);
          } catch (error) {
            failed = { ok: false, error, retry: isTransientConflict(error) };
            throw error;
          }
          if (hook) after = await inSavepoint(tx, hook).catch(() => null);
          return done;
        });
        (after as AfterCommit | null)?.committed();
        return [{ ok: true, value }];
      } catch {
        (after as AfterCommit | null)?.failed();
        // The job's own failure, or the commit's (then it runs again on its own, as a batch would).
        return failed ? [failed] : null;
      }
    }
    const outcomes: Outcome[] = [];
    let after: AfterCommit | null = null;
    try {
      await this.db.transaction(async (tx) => {
        for (const job of batch) {
          try {
            outcomes.push({ ok: true, value: await inSavepoint(tx, job.work) });
          } catch (error) {
            outcomes.push({ ok: false, error, retry: isTransientConflict(error) });
          }
        }
        if (hook) {
          try {
            after = await inSavepoint(tx, hook);
          } catch {
            after = null;
          }
        }
      });
      (after as AfterCommit | null)?.committed();
      return outcomes;
    } catch {
      (after as AfterCommit | null)?.failed();
      return null;
    }
  }

  /** Each job in a transaction of its own; a lost lock conflict is tried again, up to three times. */
  private async runAlone(jobs: Pending[]): Promise<void> {
    for (const { job, settle } of jobs) {
      for (let attempt = 1; ; attempt++) {
        try {
          settle.resolve(await this.db.transaction((tx) => job.work(tx)));
          this.commits += 1;
          this.jobs += 1;
          break;
        } catch (error) {
          if (attempt < 3 && isTransientConflict(error)) continue;
          settle.reject(error);
          break;
        }
      }
    }
  }
}

interface Pending {
  job: Job;
  settle: { resolve(value: unknown): void; reject(error: unknown): void };
}

const settler = (batch: Batch<Job, unknown>, index: number): Pending['settle'] => ({
  resolve: (value) => batch.resolve(index, value),
  reject: (error) => batch.reject(index, error),
});
