import { describe, expect, it } from 'vitest';
import { labelledDays, yTicks } from '../../console/chart.ts';

describe('the console chart axes', () => {
  it('steps the y axis evenly in integers from 0 (5 gave 0, 1, 3, 4, 5)', () => {
    expect(yTicks(0)).toEqual([0, 1, 2, 3, 4]);
    expect(yTicks(5)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(yTicks(7)).toEqual([0, 2, 4, 6, 8]);
    expect(yTicks(57)).toEqual([0, 20, 40, 60]);
    expect(yTicks(1000)).toEqual([0, 200, 400, 600, 800, 1000]);
    for (let max = 0; max < 5000; max += 7) {
      const ticks = yTicks(max);
      const step = ticks[1]! - ticks[0]!;
      expect(ticks.at(-1)).toBeGreaterThanOrEqual(max);
      expect(ticks.length).toBeLessThanOrEqual(6);
      expect(ticks.every((v, i) => Number.isInteger(v) && v === i * step)).toBe(true);
    }
  });

  it('labels the last day and at most about six others, evenly spaced back from it', () => {
    expect([...labelledDays(30)].sort((a, b) => a - b)).toEqual([4, 9, 14, 19, 24, 29]);
    expect([...labelledDays(1)]).toEqual([0]);
  });
});
