import { describe, expect, it } from 'vitest';
import { barLine, judgeRound } from '../../bench/lib/bar.ts';

describe('the bar of the end-to-end benches', () => {
  it('asks for the reference rate of the same round and CPU under the larger of 1.5 ms and the reference', () => {
    expect(judgeRound({ perSecond: 700, cpuMsPerMessage: 2.2 }, { perSecond: 690, cpuMsPerMessage: 2.3 })).toMatchObject({ met: true, cpuLimitMs: 2.3 });
    // Faster, but more CPU than a reference that spent less than the floor: the floor applies.
    expect(judgeRound({ perSecond: 900, cpuMsPerMessage: 1.4 }, { perSecond: 800, cpuMsPerMessage: 1.1 })).toMatchObject({ met: true, cpuLimitMs: 1.5 });
    expect(judgeRound({ perSecond: 900, cpuMsPerMessage: 1.6 }, { perSecond: 800, cpuMsPerMessage: 1.1 }).met).toBe(false);
    // As light, but slower.
    expect(judgeRound({ perSecond: 667, cpuMsPerMessage: 1.8 }, { perSecond: 724, cpuMsPerMessage: 2.1 })).toMatchObject({ met: false, ratio: 667 / 724 });
  });

  it('counts the rounds that met it and names each', () => {
    const line = barLine(
      [
        { perSecond: 667, cpuMsPerMessage: 1.8 },
        { perSecond: 729, cpuMsPerMessage: 1.62 },
      ],
      [
        { perSecond: 724, cpuMsPerMessage: 2.1 },
        { perSecond: 641, cpuMsPerMessage: 2.38 },
      ],
    );
    expect(line).toContain('met in 1 of 2 runs');
    expect(line).toContain('run 1 0.92x, 1.80 ms against at most 2.10 NOT MET');
    expect(line).toContain('run 2 1.14x, 1.62 ms against at most 2.38 met');
  });
});
