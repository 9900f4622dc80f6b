// What a bench ran on, in one line, so that a figure read elsewhere says which machine made it.

import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';

function cpuModel(): string {
  try {
    const model = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1];
    if (model) return model.trim();
  } catch {
    // Not Linux: what Node knows.
  }
  return cpus()[0]?.model ?? 'unknown CPU';
}

/** The load average (1/5/15 minutes) now, e.g. `0.42 0.30 0.21`. */
export const loadNow = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** `Intel(R) Xeon(R) CPU @ 2.20GHz, 2 cores, Node v20.20.2` */
export const machineName = (): string => `${cpuModel()}, ${availableParallelism()} cores, Node ${process.version}`;

/** `machine: Intel(R) Xeon(R) CPU @ 2.20GHz, 2 cores, Node v20.20.2, load 0.42 0.30 0.21, 2026-11-26 13:04 UTC` */
export function machineLine(): string {
  const date = new Date().toISOString().replace('T', ' ').slice(0, 16);
  return `machine: ${machineName()}, load ${loadNow()}, ${date} UTC`;
}
