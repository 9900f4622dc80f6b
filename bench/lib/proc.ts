// Child processes for the side-by-side benches: start one, wait for the line that says it is
// ready, read its CPU time and peak memory from /proc, stop it.

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, readFileSync } from 'node:fs';

export const TICKS_PER_SECOND = 100;

export interface Child {
  child: ChildProcess;
  pid: number;
  /** Groups of the first line that matched `ready`. */
  ready: RegExpExecArray;
  output(): string;
  stop(): Promise<void>;
}

/** Spawns `command` and resolves once its stdout or stderr matches `ready`. */
export async function startChild(
  command: string,
  args: string[],
  ready: RegExp,
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<Child> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: options.env ?? process.env, cwd: options.cwd });
  // MAILSVC_BENCH_CHILD_LOG=FILE keeps everything the children write (with `--trace-gc` in
  // MAILSVC_BENCH_NODE_ARGS, say), where only a tail is kept otherwise.
  const log = process.env.MAILSVC_BENCH_CHILD_LOG;
  let output = '';
  let matched: RegExpExecArray | null = null;
  const exited = once(child, 'exit');
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Nobody will stop a child that never became ready: it would outlive the caller.
      child.kill('SIGKILL');
      reject(new Error(`${command} not ready after ${options.timeoutMs ?? 60_000} ms:\n${output}`));
    }, options.timeoutMs ?? 60_000);
    const onData = (d: Buffer) => {
      if (log) appendFileSync(log, d);
      // Keep only a tail: a busy child's logs must not grow the parent.
      output = (output + d.toString()).slice(-20_000);
      if (matched) return;
      matched = ready.exec(output);
      if (matched) {
        clearTimeout(timer);
        resolve(matched);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited ${code} before it was ready:\n${output}`));
    });
  });
  return {
    child,
    pid: child.pid!,
    ready: match,
    output: () => output,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** User + system CPU seconds a process has used so far; with `thread`, that thread's alone (its main thread's id is the pid). */
export function cpuSeconds(pid: number, thread?: number): number {
  const stat = readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, 'utf8');
  // The command name (field 2) may hold spaces; the fields after it are fixed.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Fields 3.. of /proc/PID/stat (the command name, field 2, may hold spaces); null once it is gone. */
export function statOf(pid: number | 'self'): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** utime + stime, and with `reaped` the waited-for children's cutime + cstime, in ticks; null once it is gone. */
export function ticksOf(pid: number | 'self', reaped: boolean): number | null {
  const f = statOf(pid);
  if (!f) return null;
  return Number(f[11]) + Number(f[12]) + (reaped ? Number(f[13]) + Number(f[14]) : 0);
}

/**
 * A child's CPU seconds so far, remembered: once it has exited (and /proc no longer has it) the
 * last value read is returned.
 */
export function childCpu(pid: number | undefined): () => number {
  let last = 0;
  return () => {
    const ticks = pid === undefined ? null : ticksOf(pid, false);
    if (ticks !== null) last = ticks / TICKS_PER_SECOND;
    return last;
  };
}

/** This process's own CPU seconds plus those of the children it has waited for (an exited smtp-source). */
export const selfAndReapedCpu = (): number => ticksOf('self', true)! / TICKS_PER_SECOND;

/** Peak resident memory of a process, in MB. */
export function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
  return kb ? Math.round(Number(kb) / 1024) : 0;
}

/** min / median / max of some figures. */
export function spread(values: number[]): { min: number; median: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { min: sorted[0], median, max: sorted[sorted.length - 1] };
}

export const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export const showSpread = (values: number[], digits = 0): string => {
  const s = spread(values);
  return `${fmt(s.min, digits)}/${fmt(s.median, digits)}/${fmt(s.max, digits)}`;
};
