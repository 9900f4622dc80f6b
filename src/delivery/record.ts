import type { Config } from '../config/schema.ts';
import type { Clock, Logger, RandomSource } from '../core/ports.ts';
import type { Metrics } from '../metrics/registry.ts';
import type { GroupCommitter } from '../store/groupCommit.ts';
import type { MessageRow, RecipientRow } from '../store/messages.ts';
import { logOutcome } from './log.ts';
import { recordVerdict, type Recorded, type Verdict } from './outcome.ts';

export interface RecorderDeps {
  config: Config;
  committer: GroupCommitter;
  clock: Clock;
  random: RandomSource;
  metrics: Metrics;
}

/**
 * Records one attempt's outcome in a group-committed transaction (which checks the lease first),
 * then counts and logs it. Null when nothing could be written: the lease then runs out and the
 * row is tried again.
 */
export async function recordOutcome(
  deps: RecorderDeps,
  log: Logger,
  owner: string,
  attempt: { row: RecipientRow; message: Pick<MessageRow, 'id' | 'workspace_id' | 'stream' | 'domain'>; verdict: Verdict; startedAt: number },
): Promise<Recorded | null> {
  const { row, message, verdict } = attempt;
  const { delivery, server } = deps.config;
  let recorded: Recorded;
  try {
    // A failed shared commit is retried job by job by the committer itself.
    recorded = await deps.committer.run((tx) =>
      recordVerdict(tx, row, message, verdict, {
        owner,
        now: deps.clock.now(),
        random: deps.random,
        policy: { scheduleSeconds: delivery.retrySchedule, maxAgeSeconds: delivery.maxAge },
        hostname: server.hostname,
      }),
    );
  } catch (err) {
    log.error({ err, email_id: row.message_id, recipient_id: row.id }, 'could not record the outcome; the row will be retried after its lease');
    return null;
  }
  const seconds = (Date.now() - attempt.startedAt) / 1000;
  deps.metrics.deliveryOutcomes.inc({ outcome: recorded.outcome, bounce_type: 'bounceType' in recorded ? (recorded.bounceType ?? '') : '' });
  deps.metrics.deliveryDuration.observe({ outcome: recorded.outcome }, seconds);
  logOutcome(log, row, verdict, recorded, seconds);
  return recorded;
}
