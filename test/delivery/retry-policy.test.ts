import { describe, expect, it } from 'vitest';
import { nextAttempt } from '../../src/delivery/retry.ts';

const policy = { scheduleSeconds: [60, 300, 900, 1800, 3600, 7200, 14400, 28800], maxAgeSeconds: 259_200 };
const T0 = Date.parse('2026-11-21T10:00:00.000Z');

describe('the retry schedule', () => {
  it('keeps each retry within ±10% of its interval, the last interval repeating', () => {
    const at = (attempts: number, random: number) => nextAttempt(policy, attempts, T0, T0, () => random);
    expect(at(1, 0)).toStrictEqual({ kind: 'retry', dueAt: T0 + 54_000 });
    expect(at(1, 0.5)).toStrictEqual({ kind: 'retry', dueAt: T0 + 60_000 });
    expect(at(1, 0.999_999)).toStrictEqual({ kind: 'retry', dueAt: T0 + 66_000 });
    expect(at(8, 0.5)).toStrictEqual({ kind: 'retry', dueAt: T0 + 28_800_000 });
    expect(at(30, 0.5)).toStrictEqual({ kind: 'retry', dueAt: T0 + 28_800_000 });
  });

  it('never schedules past the maximum age, and expires once it is reached', () => {
    const lateFailure = T0 + 70 * 3600_000;
    expect(nextAttempt(policy, 12, T0, lateFailure, () => 0.5)).toStrictEqual({ kind: 'retry', dueAt: T0 + 72 * 3600_000 });
    expect(nextAttempt(policy, 13, T0, T0 + 72 * 3600_000, () => 0.5)).toStrictEqual({ kind: 'expire' });
  });
});
