/**
 * The bar the end-to-end benches are held to (docs/PERFORMANCE.md), judged run by run against the
 * reference's run of the same round: at least Postfix's rate, and CPU per message at most 1.5 ms
 * or at most Postfix's own, whichever is larger. Ratios of one round only: the machine's speed
 * moves from one minute to the next.
 */

/** CPU per message (all threads) that always meets the bar, whatever the reference spent. */
export const CPU_FLOOR_MS = 1.5;

export interface RoundFigures {
  perSecond: number;
  cpuMsPerMessage: number;
}

export interface RoundVerdict {
  ratio: number;
  cpuMs: number;
  cpuLimitMs: number;
  met: boolean;
}

export function judgeRound(target: RoundFigures, reference: RoundFigures): RoundVerdict {
  const ratio = target.perSecond / reference.perSecond;
  const cpuLimitMs = Math.max(CPU_FLOOR_MS, reference.cpuMsPerMessage);
  return { ratio, cpuMs: target.cpuMsPerMessage, cpuLimitMs, met: ratio >= 1 && target.cpuMsPerMessage <= cpuLimitMs };
}

/** One line: how many rounds met the bar, and each round's figures. */
export function barLine(target: RoundFigures[], reference: RoundFigures[]): string {
  const rounds = target.slice(0, reference.length).map((t, i) => judgeRound(t, reference[i]!));
  const met = rounds.filter((r) => r.met).length;
  const each = rounds.map(
    (r, i) => `run ${i + 1} ${r.ratio.toFixed(2)}x, ${r.cpuMs.toFixed(2)} ms against at most ${r.cpuLimitMs.toFixed(2)} ${r.met ? 'met' : 'NOT MET'}`,
  );
  return `the bar (at least Postfix's msgs/s, CPU at most max(${CPU_FLOOR_MS} ms, Postfix's)) met in ${met} of ${rounds.length} runs: ${each.join('; ')}`;
}
