import type { Config } from '../config/schema.ts';
import type { Clock, Logger } from '../core/ports.ts';
import { IDEMPOTENCY_WINDOW_MS } from '../messages/idempotency.ts';
import type { Db } from '../store/db.ts';
import { idempotencyRepo } from '../store/idempotency.ts';
import { rateLimits } from '../store/rateLimits.ts';
import { pruneRetained } from './messages.ts';

/** Deletes state whose window has passed; returns what it removed. */
export async function pruneExpired(db: Db, clock: Clock) {
  const now = clock.now();
  return {
    idempotency: await idempotencyRepo.prune(db, now - IDEMPOTENCY_WINDOW_MS),
    rateLimitBuckets: await rateLimits.prune(db, now),
  };
}

/**
 * Runs the pruning every `intervalMs` until stopped: expired windows always, and with `config`
 * the message bodies and events older than `retention.days`.
 */
export function startRetention(deps: { db: Db; clock: Clock; log: Logger; config?: Pick<Config, 'retention'> }, intervalMs = 60_000): { stop(): void } {
  const timer = setInterval(() => {
    const run = async () => ({
      ...(await pruneExpired(deps.db, deps.clock)),
      ...(deps.config ? await pruneRetained(deps.db, deps.clock.now(), deps.config.retention.days) : {}),
    });
    run().then(
      (removed) => deps.log.debug({ phase: 'retention', ...removed }, 'pruned expired state'),
      (err) => deps.log.warn({ phase: 'retention', err }, 'pruning failed; will retry'),
    );
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
