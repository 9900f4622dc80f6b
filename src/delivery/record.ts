import type { Config } from '../config/schema.ts';
import { Batcher } from '../core/batcher.ts';
import type { Clock, Logger, RandomSource } from '../core/ports.ts';
import type { Metrics } from '../metrics/registry.ts';
import type { GroupCommitter } from '../store/groupCommit.ts';
import { logOutcome } from './log.ts';
import { recordVerdicts, type Attempt, type RecordDeps, type Recorded } from './outcome.ts';

export interface RecorderDeps {
  config: Config;
  committer: GroupCommitter;
  clock: Clock;
  random: RandomSource;
  metrics: Metrics;
}

type Timed = Attempt & { startedAt: number };

/** Attempts written by one group-commit job at most; more wait for the next. */
const MAX_BATCH = 500;
/**
 * How long the first outcome of a batch waits for others before its job is queued. Outcomes
 * finish one by one as SMTP transactions end; without the wait a busy SQLite process committed
 * about four per commit (1,359 commits for 5,000 outcomes in `http-to-sink`). Nobody waits for
 * the answer but the delivery slot, which is held a few milliseconds longer. At 5 ms a batch
 * still held about eight outcomes at 450 deliveries a second; 20 ms took 8% off the event loop's
 * CPU in `http-to-sink` (two pairs of 10,000 messages) for the same throughput.
 */
const LINGER_MS = 20;

/**
 * Records attempts' outcomes for one worker (its lease owner), so its outcomes share batches.
 * Outcomes that arrive within `LINGER_MS` of each other, or while a shared commit is under way,
 * are written by ONE job of the next commit, as a batch (`recordVerdicts`): a fixed number of
 * statements per batch rather than a dozen per attempt, which on PostgreSQL is the difference
 * between one round trip and hundreds. The job takes the batch when the commit runs it. If the
 * batch fails as a whole, each attempt is tried again in a job of its own, so one bad row costs
 * only itself.
 */
export class OutcomeRecorder {
  private readonly batcher: Batcher<Timed, Recorded>;

  constructor(
    private readonly deps: RecorderDeps,
    private readonly owner: string,
  ) {
    this.batcher = new Batcher({
      name: 'the outcome recorder',
      maxBatch: MAX_BATCH,
      start: LINGER_MS,
      retryAlone: true,
      write: (batch) => this.deps.committer.run((tx) => recordVerdicts(tx, batch.take(), this.recordDeps())),
    });
  }

  /**
   * Records one attempt's outcome under its lease, then counts and logs it. Null when nothing
   * could be written: the lease then runs out and the row is tried again.
   */
  async record(log: Logger, attempt: Timed): Promise<Recorded | null> {
    let recorded: Recorded;
    try {
      recorded = await this.batcher.add(attempt);
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

  /** Writes the outcomes still waiting for their commit. */
  close(): Promise<void> {
    return this.batcher.close();
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
