import type { Config } from '../config/schema.ts';
import type { Clock, Logger, RandomSource } from '../core/ports.ts';
import type { Metrics } from '../metrics/registry.ts';
import type { GroupCommitter } from '../store/groupCommit.ts';
import type { Tx } from '../store/db.ts';
import { logOutcome } from './log.ts';
import { recordVerdicts, type Attempt, type RecordDeps, type Recorded } from './outcome.ts';

export interface RecorderDeps {
  config: Config;
  committer: GroupCommitter;
  clock: Clock;
  random: RandomSource;
  metrics: Metrics;
}

type Pending = Attempt & { startedAt: number; resolve: (r: Recorded) => void; reject: (e: unknown) => void };

/** Attempts written by one group-commit job at most; more wait for the next. */
const MAX_BATCH = 500;
/**
 * How long the first outcome of a batch waits for others before its job is queued. Outcomes
 * finish one by one as SMTP transactions end; without the wait a busy SQLite process committed
 * about four per commit (1,359 commits for 5,000 outcomes in `http-to-sink`). Nobody waits for
 * the answer but the delivery slot, which is held a few milliseconds longer.
 */
const LINGER_MS = 5;

/**
 * Records attempts' outcomes for one worker (its lease owner), so its outcomes share batches.
 * Outcomes that arrive within `LINGER_MS` of each other, or while a shared commit is under way,
 * are written by ONE job of the next commit, as a batch
 * (`recordVerdicts`): a fixed number of statements per batch rather than a dozen per attempt,
 * which on PostgreSQL is the difference between one round trip and hundreds. If the batch fails
 * as a whole, each attempt is tried again in a job of its own, so one bad row costs only itself.
 */
export class OutcomeRecorder {
  private pending: Pending[] = [];
  /** A job is queued in the committer that has not yet taken the pending attempts. */
  private queued = false;

  constructor(
    private readonly deps: RecorderDeps,
    private readonly owner: string,
  ) {}

  /**
   * Records one attempt's outcome under its lease, then counts and logs it. Null when nothing
   * could be written: the lease then runs out and the row is tried again.
   */
  async record(log: Logger, attempt: Attempt & { startedAt: number }): Promise<Recorded | null> {
    let recorded: Recorded;
    try {
      recorded = await new Promise<Recorded>((resolve, reject) => {
        this.pending.push({ ...attempt, resolve, reject });
        if (!this.queued) {
          this.queued = true;
          setTimeout(() => this.queueJob(), LINGER_MS);
        }
      });
    } catch (err) {
      log.error({ err, email_id: attempt.row.message_id, recipient_id: attempt.row.id }, 'could not record the outcome; the row will be retried after its lease');
      return null;
    }
    const seconds = (Date.now() - attempt.startedAt) / 1000;
    this.deps.metrics.deliveryOutcomes.inc({ outcome: recorded.outcome, bounce_type: 'bounceType' in recorded ? (recorded.bounceType ?? '') : '' });
    this.deps.metrics.deliveryDuration.observe({ outcome: recorded.outcome }, seconds);
    logOutcome(log, attempt.row, attempt.verdict, recorded, seconds);
    return recorded;
  }

  private queueJob(): void {
    this.queued = true;
    let batch: Pending[] | null = null;
    // The job takes what is pending when it runs, not when it was queued: everything that came
    // in while the commit before it was under way. A job run again (a lost lock conflict) keeps
    // the batch it took.
    const job = (tx: Tx) => {
      if (batch === null) {
        batch = this.pending.splice(0, MAX_BATCH);
        this.queued = false;
        if (this.pending.length > 0) this.queueJob();
      }
      return recordVerdicts(tx, batch, this.recordDeps());
    };
    this.deps.committer.run(job).then(
      (results) => batch!.forEach((p, i) => p.resolve(results[i]!)),
      (err) => {
        if (batch === null) {
          // Never ran (the committer gave up before it): whatever is pending gets a new job.
          this.queued = false;
          if (this.pending.length > 0) this.queueJob();
          return;
        }
        if (batch.length === 1) return batch[0]!.reject(err);
        for (const p of batch) {
          this.deps.committer.run((tx) => recordVerdicts(tx, [p], this.recordDeps())).then((r) => p.resolve(r[0]!), p.reject);
        }
      },
    );
  }

  private recordDeps(): RecordDeps {
    const { delivery, server } = this.deps.config;
    return {
      owner: this.owner,
      now: this.deps.clock.now(),
      random: this.deps.random,
      policy: { scheduleSeconds: delivery.retrySchedule, maxAgeSeconds: delivery.maxAge },
      hostname: server.hostname,
    };
  }
}
