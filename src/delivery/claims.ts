import { randomBytes } from 'node:crypto';
import { hostname as machineName } from 'node:os';
import type { Clock, Logger } from '../core/ports.ts';
import { singleWriter, type Db } from '../store/db.ts';
import type { GroupCommitter } from '../store/groupCommit.ts';
import type { RecipientRow } from '../store/messages.ts';
import { queueRepo, type ClaimRequest } from '../store/queue.ts';

/**
 * The rows this worker holds under a lease, and the work running on each. Claims take due rows
 * in one statement (SKIP LOCKED on PostgreSQL); leases are renewed every third of a lease while
 * the work runs, so a slow transaction keeps its row; stop() gives unfinished rows back.
 */
export class LeasedClaims {
  /** Unique per worker instance: a lease taken by an earlier run of this process is not ours. */
  readonly owner = `${machineName().slice(0, 40)}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly inFlight = new Map<number, Promise<void>>();
  private renewTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly deps: { db: Db; clock: Clock; log: Logger; committer: GroupCommitter },
    private readonly leaseMs: number,
    /** Called whenever the number of rows in flight changes. */
    private readonly changed: (inFlight: number) => void,
  ) {}

  get size(): number {
    return this.inFlight.size;
  }

  /**
   * Claims up to `limit` due rows and starts `work` on each; returns how many were claimed.
   * `claimed` sees the whole batch first (to load what its rows share in one go).
   */
  async claim(limit: number, work: (row: RecipientRow) => Promise<void>, claimed?: (rows: RecipientRow[]) => void, shape?: ClaimRequest['shape']): Promise<number> {
    const req = { owner: this.owner, now: this.deps.clock.now(), leaseMs: this.leaseMs, limit, shape };
    const { db, committer } = this.deps;
    // SQLite: a job of the shared commit, not a transaction (and a WAL sync) of its own. On
    // PostgreSQL the claim is one statement that skips locked rows, best run beside the commits.
    const rows = singleWriter(db) ? await committer.run((tx) => queueRepo.claim(tx, req)) : await queueRepo.claim(db, req);
    if (rows.length > 0) claimed?.(rows);
    for (const row of rows) {
      // Our own lease may have lapsed while we still work on the row (a stalled event loop):
      // the claim renewed it, and the delivery already running will record the outcome.
      if (this.inFlight.has(row.id)) continue;
      this.inFlight.set(
        row.id,
        work(row).finally(() => {
          this.inFlight.delete(row.id);
          this.changed(this.inFlight.size);
        }),
      );
    }
    this.changed(this.inFlight.size);
    return rows.length;
  }

  /** Every piece of work started so far, settled. */
  settled(): Promise<unknown> {
    return Promise.allSettled(this.inFlight.values());
  }

  /** Keeps renewing leases until the returned function is called. */
  renewing(): () => void {
    if (this.renewTimer) return () => undefined;
    // A third of a lease: two renewals may fail (a busy database) before the lease runs out.
    const timer = setInterval(() => void this.renew(), Math.max(100, Math.floor(this.leaseMs / 3)));
    timer.unref();
    this.renewTimer = timer;
    return () => {
      clearInterval(timer);
      this.renewTimer = null;
    };
  }

  /** Gives the rows still in flight back to the queue, due now, for another worker. */
  async releaseUnfinished(): Promise<{ unfinished: number; released: number }> {
    const ids = [...this.inFlight.keys()];
    if (ids.length === 0) return { unfinished: 0, released: 0 };
    const released = await queueRepo.release(this.deps.db, this.owner, ids, this.deps.clock.now()).catch(() => 0);
    return { unfinished: ids.length, released };
  }

  private async renew(): Promise<void> {
    const ids = [...this.inFlight.keys()];
    if (ids.length === 0) return;
    try {
      await queueRepo.renew(this.deps.db, this.owner, ids, this.deps.clock.now(), this.leaseMs);
    } catch (err) {
      this.deps.log.warn({ err }, 'lease renewal failed; will retry');
    }
  }
}
