import type { Db, Tx } from './db.ts';

interface Job {
  work: (tx: Tx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: writes that arrive while a transaction is committing are gathered and committed
 * together, so one fsync (SQLite, synchronous=FULL) or one commit round trip (PostgreSQL)
 * serves many requests. Each job runs in a savepoint of its own: one job's failure rolls back
 * only its own writes. A job's promise settles only after the shared commit, so a caller never
 * answers before its data is durable.
 */
export class GroupCommitter {
  private queue: Job[] = [];
  private draining = false;
  private commits = 0;
  private jobs = 0;

  constructor(
    private readonly db: Db,
    private readonly maxBatch = 256,
  ) {}

  run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
      if (!this.draining) void this.drain();
    });
  }

  /** Commits and jobs so far, to see how well commits are shared. */
  stats() {
    return { commits: this.commits, jobs: this.jobs };
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0) {
        // SQLite's driver is synchronous: without yielding to I/O first, requests that arrived
        // during the last commit would still be unparsed and every batch would hold one job.
        await new Promise((resolve) => setImmediate(resolve));
        const batch = this.queue.splice(0, this.maxBatch);
        const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
        try {
          await this.db.transaction(async (tx) => {
            for (const job of batch) {
              try {
                outcomes.push({ ok: true, value: await tx.transaction((sp) => job.work(sp)) });
              } catch (error) {
                outcomes.push({ ok: false, error });
              }
            }
          });
        } catch (error) {
          for (const job of batch) job.reject(error);
          continue;
        }
        this.commits += 1;
        this.jobs += batch.length;
        batch.forEach((job, i) => {
          const outcome = outcomes[i];
          if (outcome.ok) job.resolve(outcome.value);
          else job.reject(outcome.error);
        });
      }
    } finally {
      this.draining = false;
    }
  }
}
