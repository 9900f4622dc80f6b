import type { Db, Tx } from './db.ts';

interface Job {
  work: (tx: Tx) => Promise<unknown>;
  /** Set for `runOwn`: the job is given the database and makes its writes atomic itself. */
  own?: (db: Db) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
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
  private queue: Job[] = [];
  /** Batches being committed right now, at most `lanes`. */
  private active = 0;
  private commits = 0;
  private jobs = 0;
  private hook: CommitHook | null = null;

  constructor(
    private readonly db: Db,
    private readonly maxBatch = 256,
    /**
     * Transactions committing side by side; jobs gathered while every lane is busy share the
     * next one. The main committer has one lane on both databases (`commitLanes`, store/db.ts:
     * SQLite has one writer, and on PostgreSQL shared batches side by side deadlocked on message
     * rows); on PostgreSQL accepting has a committer of its own with two (`services.ts`).
     */
    private readonly lanes = 1,
    /**
     * While busy (jobs arrived during the last commit), how long the next batch waits for more
     * before it commits: fewer, larger commits. A job arriving at an idle committer commits
     * after one turn of the event loop.
     */
    private readonly lingerMs = 0,
  ) {}

  run<T>(work: (tx: Tx) => Promise<T>, options: RunOptions = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (v: unknown) => void, reject, last: options.last ?? false });
      if (this.active < this.lanes) void this.drain();
    });
  }

  /**
   * A job that makes its own writes atomic (one statement, or a transaction of its own) and so
   * needs no shared transaction: on PostgreSQL that saves the BEGIN and COMMIT round trips. It
   * still takes a lane like any job, so that work arriving meanwhile waits and gathers.
   */
  runOwn<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work: (tx) => work(tx), own: work, resolve: resolve as (v: unknown) => void, reject, last: false });
      if (this.active < this.lanes) void this.drain();
    });
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

  private async drain(): Promise<void> {
    this.active += 1;
    // Jobs that queued while this lane was committing mean the committer is busy.
    let busy = false;
    try {
      while (this.queue.length > 0) {
        // SQLite's driver is synchronous: without yielding to I/O first, requests that arrived
        // during the last commit would still be unparsed and every batch would hold one job.
        await new Promise((resolve) => (this.lingerMs > 0 && busy ? setTimeout(resolve, this.lingerMs) : setImmediate(resolve)));
        busy = true;
        // Stable: jobs keep their order, those asking to run last after the others.
        let batch = this.queue.splice(0, this.maxBatch).sort((a, b) => Number(a.last) - Number(b.last));
        // Another lane took what was queued.
        if (batch.length === 0) break;
        const own = batch.filter((job) => job.own);
        for (const job of own) {
          try {
            const value = await job.own!(this.db);
            this.commits += 1;
            this.jobs += 1;
            job.resolve(value);
          } catch (error) {
            job.reject(error);
          }
        }
        if (own.length > 0) batch = batch.filter((job) => !job.own);
        if (batch.length === 0) continue;
        const outcomes = await this.runShared(batch);
        if (outcomes === null) {
          await this.runAlone(batch);
          continue;
        }
        this.commits += 1;
        const again: Job[] = [];
        batch.forEach((job, i) => {
          const outcome = outcomes[i];
          if (outcome.ok) {
            this.jobs += 1;
            job.resolve(outcome.value);
          } else if (outcome.retry) again.push(job);
          else job.reject(outcome.error);
        });
        await this.runAlone(again);
      }
    } finally {
      this.active -= 1;
    }
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
  private async runAlone(jobs: Job[]): Promise<void> {
    for (const job of jobs) {
      for (let attempt = 1; ; attempt++) {
        try {
          job.resolve(await this.db.transaction((tx) => job.work(tx)));
          this.commits += 1;
          this.jobs += 1;
          break;
        } catch (error) {
          if (attempt < 3 && isTransientConflict(error)) continue;
          job.reject(error);
          break;
        }
      }
    }
  }
}
