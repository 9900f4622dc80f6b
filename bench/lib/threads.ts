// CPU time of a Node process split by thread, from /proc/PID/task: the event loop, worker_threads,
// V8's platform threads (garbage collection, compilation) and libuv's thread pool, plus the
// threads that ended within the window.
//
// Node 20 names none of its threads (each one's comm is the process's), so they are told apart
// by what Node does when it starts them and how they wait: V8's platform threads (and the
// delayed-task thread beside them) block SIGUSR1 alone, the thread that waits for SIGUSR1 blocks
// every signal; of the threads blocking none, a worker_thread idles in epoll (it runs an event
// loop) and a thread of libuv's pool on a futex, looked at every 200 ms over the run
// (`watchThreadWaits`). A thread never seen waiting goes by its age: the first
// UV_THREADPOOL_SIZE (default 4) are taken for libuv's pool, made at the first file read before
// any Worker exists. Newer Node names its threads (`libuv-worker`, `V8Worker`, a
// Worker's `name`), and a named thread goes by its name.

import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;
const SIGUSR1_ONLY = 1n << 9n;
/** System call numbers a thread idles in: epoll_wait, epoll_pwait(2) for an event loop; futex for a pool. */
const SYSCALLS: Record<string, { loop: number[]; futex: number }> = {
  x64: { loop: [232, 281, 441], futex: 202 },
  arm64: { loop: [22, 441], futex: 98 },
};

interface ThreadStat {
  tid: number;
  comm: string;
  ticks: number;
  startTicks: number;
  blocked: bigint;
  /** How it waits when it was sampled: in an event loop, on a futex, or not known (running). */
  waiting?: 'loop' | 'futex';
}

export interface ThreadSample {
  pid: number;
  /** utime + stime of the whole process (live and ended threads), in ticks. */
  processTicks: number;
  threads: Map<number, ThreadStat>;
}

/** Fields 3.. of a /proc stat line (the command name, field 2, may hold spaces). */
const statFields = (stat: string): string[] => stat.slice(stat.lastIndexOf(')') + 2).split(' ');

function readThread(pid: number, tid: number): ThreadStat | null {
  try {
    const dir = `/proc/${pid}/task/${tid}`;
    const f = statFields(readFileSync(`${dir}/stat`, 'utf8'));
    const blocked = /^SigBlk:\s*([0-9a-f]+)$/m.exec(readFileSync(`${dir}/status`, 'utf8'))?.[1] ?? '0';
    return {
      tid,
      comm: readFileSync(`${dir}/comm`, 'utf8').trim(),
      ticks: Number(f[11]) + Number(f[12]),
      startTicks: Number(f[19]),
      blocked: BigInt(`0x${blocked}`),
      waiting: waitingIn(dir),
    };
  } catch {
    return null; // ended while we looked
  }
}

function waitingIn(dir: string): 'loop' | 'futex' | undefined {
  const known = SYSCALLS[process.arch];
  if (!known) return undefined;
  try {
    const call = Number(readFileSync(`${dir}/syscall`, 'utf8').split(' ')[0]);
    return known.loop.includes(call) ? 'loop' : call === known.futex ? 'futex' : undefined;
  } catch {
    return undefined; // running, or not ours to read
  }
}

export function sampleThreads(pid: number): ThreadSample {
  const threads = new Map<number, ThreadStat>();
  for (const name of readdirSync(`/proc/${pid}/task`)) {
    const t = readThread(pid, Number(name));
    if (t) threads.set(t.tid, t);
  }
  const f = statFields(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  return { pid, processTicks: Number(f[11]) + Number(f[12]), threads };
}

function groupOfName(comm: string): string {
  if (/libuv/i.test(comm)) return 'libuv';
  if (/^V8|DelayedTask|Platform/i.test(comm)) return 'V8 platform';
  if (/sign/i.test(comm)) return 'workers(sign)';
  if (/smtp-in/i.test(comm)) return 'workers(submission)';
  if (/WorkerThread/i.test(comm)) return 'workers';
  return 'other';
}

/** How often each thread was seen waiting in an event loop and on a futex, by `watchThreadWaits`. */
export type WaitsSeen = Map<number, { loop: number; futex: number }>;

/**
 * Looks at how each thread of `pid` waits every `everyMs` until stopped. Two samples can both
 * find a busy signing thread running, which left it to the start-order rule (and took it for
 * libuv's when the pool started late); over a run each thread is seen idle many times.
 */
export function watchThreadWaits(pid: number, everyMs = 200): { seen: WaitsSeen; stop(): void } {
  const seen: WaitsSeen = new Map();
  const look = () => {
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      return; // the process has ended
    }
    for (const name of tids) {
      const waiting = waitingIn(`/proc/${pid}/task/${name}`);
      if (!waiting) continue;
      const tid = Number(name);
      const counts = seen.get(tid) ?? { loop: 0, futex: 0 };
      counts[waiting] += 1;
      seen.set(tid, counts);
    }
  };
  look();
  const timer = setInterval(look, everyMs);
  timer.unref();
  return { seen, stop: () => clearInterval(timer) };
}

/**
 * Each live thread's group: main, workers(...), V8 platform, libuv, other. `earlier`: another
 * sample, for how a thread waited then; `seen`: how each waited over the run, which decides
 * when the samples do not.
 */
export function threadGroups(sample: ThreadSample, earlier?: ThreadSample, seen?: WaitsSeen): Map<number, string> {
  const groups = new Map<number, string>();
  const main = sample.threads.get(sample.pid);
  const unknown: ThreadStat[] = [];
  for (const t of sample.threads.values()) {
    const counts = seen?.get(t.tid);
    const watched = counts ? (counts.loop >= counts.futex ? 'loop' : 'futex') : undefined;
    const waiting = watched ?? t.waiting ?? earlier?.threads.get(t.tid)?.waiting;
    if (t.tid === sample.pid) groups.set(t.tid, 'main');
    else if (main && t.comm !== main.comm) groups.set(t.tid, groupOfName(t.comm));
    else if (t.blocked !== 0n) groups.set(t.tid, t.blocked === SIGUSR1_ONLY ? 'V8 platform' : 'other');
    else if (waiting) groups.set(t.tid, waiting === 'loop' ? 'workers' : 'libuv');
    else unknown.push(t);
  }
  const poolSize = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  let pool = [...groups.values()].filter((g) => g === 'libuv').length;
  unknown.sort((a, b) => a.startTicks - b.startTicks || a.tid - b.tid);
  for (const t of unknown) groups.set(t.tid, pool++ < poolSize ? 'libuv' : 'workers');
  return groups;
}

export interface ThreadCpu {
  /** Seconds of CPU in the window, all threads. */
  total: number;
  /** Seconds by group, main first; `exited threads` for threads that ended in the window. */
  groups: [string, number][];
}

/** CPU between two samples of the same process, by the groups of the threads alive at the end. */
export function cpuByThread(before: ThreadSample, after: ThreadSample, seen?: WaitsSeen): ThreadCpu {
  const groups = threadGroups(after, before, seen);
  const sums = new Map<string, number>();
  let live = 0;
  for (const t of after.threads.values()) {
    const ticks = t.ticks - (before.threads.get(t.tid)?.ticks ?? 0);
    live += ticks;
    const g = groups.get(t.tid) ?? 'other';
    sums.set(g, (sums.get(g) ?? 0) + ticks);
  }
  const total = after.processTicks - before.processTicks;
  const exited = total - live;
  if (exited > 0) sums.set('exited threads', exited);
  return {
    total: total / TICKS_PER_SECOND,
    groups: [...sums].map(([g, ticks]): [string, number] => [g, ticks / TICKS_PER_SECOND]).sort((a, b) => rank(a[0]) - rank(b[0]) || a[0].localeCompare(b[0])),
  };
}

const ORDER = ['main', 'workers', 'V8 platform', 'libuv', 'other', 'exited threads'];
/** The same order in every run, so that runs read side by side. */
const rank = (group: string): number => ORDER.indexOf(group.replace(/\(.*\)$/, ''));

/** `main 9.1 s, workers 3.2 s, V8 platform 1.1 s, libuv 0.4 s` */
export const showThreadCpu = (cpu: ThreadCpu): string => cpu.groups.map(([g, s]) => `${g} ${s.toFixed(1)} s`).join(', ');
