import type { RandomSource } from '../core/ports.ts';

export interface RetryPolicy {
  /** Seconds before retry 1, 2, ...; the last interval repeats (1m 5m 15m 30m 1h 2h 4h 8h). */
  scheduleSeconds: number[];
  /** Seconds from when the recipient first became due until we give up (72 h). */
  maxAgeSeconds: number;
  /** ±fraction of each interval, so a burst deferred together does not retry together. */
  jitter?: number;
}

export type RetryDecision = { kind: 'retry'; dueAt: number } | { kind: 'expire' };

/**
 * What to do after the `attempts`-th failed attempt (1 = the first). A row past its maximum age
 * expires; otherwise it comes back after the interval for this attempt, jittered, but never
 * later than the moment it would expire, so the last try happens at the deadline itself and the
 * `failed` outcome is recorded on time rather than up to 8 h late.
 */
export function nextAttempt(policy: RetryPolicy, attempts: number, firstDueAt: number, now: number, random: RandomSource): RetryDecision {
  const expiresAt = firstDueAt + policy.maxAgeSeconds * 1000;
  if (now >= expiresAt) return { kind: 'expire' };
  const schedule = policy.scheduleSeconds;
  const base = schedule[Math.min(Math.max(attempts, 1), schedule.length) - 1]! * 1000;
  const jitter = policy.jitter ?? 0.1;
  const delay = Math.round(base * (1 - jitter + 2 * jitter * random()));
  return { kind: 'retry', dueAt: Math.min(now + delay, expiresAt) };
}
