// The benches tell a Node process's threads apart by how Node starts them (Node 20 names none of
// them): this pins that reading against the Node that runs the tests, so that a Node that starts
// its threads differently shows here rather than as a wrong split in a bench.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cpuByThread, sampleThreads, threadGroups, watchThreadWaits } from '../../bench/lib/threads.ts';
import { waitForPort } from '../../bench/lib/smtp.ts';

const CHILD = `
import { Worker } from 'node:worker_threads';
process.stdin.once('data', () => {
  const worker = new Worker(
    "const { parentPort } = require('node:worker_threads'); let x = 0; for (let i = 0; i < 3e8; i++) x += i % 7; parentPort.postMessage(x); setInterval(() => {}, 1000);",
    { eval: true, name: 'mailsvc-sign' },
  );
  worker.once('message', () => console.log('worked'));
});
console.log('ready');
setInterval(() => {}, 1000);
`;

/** libuv's default pool (4 threads), which the reading assumes when UV_THREADPOOL_SIZE is not set. */
function withoutPoolSize(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.UV_THREADPOOL_SIZE;
  return env;
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!existsSync('/proc/self/task'))('CPU by thread from /proc', () => {
  it('finds the main thread, libuv pool, V8 platform threads and a worker thread, and charges the worker its work', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-threads-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'child.mjs'), CHILD);
    const child = spawn(process.execPath, [join(dir, 'child.mjs')], { stdio: ['pipe', 'pipe', 'inherit'], env: withoutPoolSize() });
    try {
      const lines: string[] = [];
      child.stdout.on('data', (d: Buffer) => lines.push(...d.toString().trim().split('\n')));
      while (!lines.includes('ready')) await once(child.stdout, 'data');
      const before = sampleThreads(child.pid!);
      const waits = watchThreadWaits(child.pid!, 20);
      child.stdin.write('go\n');
      while (!lines.includes('worked')) await once(child.stdout, 'data');
      const after = sampleThreads(child.pid!);
      // The worker idles in its event loop once it has answered: let the watch see it there. It
      // is the thread the first sample did not have (a V8 platform thread idles in a loop too).
      const workerIdled = () => [...waits.seen].some(([tid, seen]) => !before.threads.has(tid) && seen.loop > 0);
      while (!workerIdled()) await new Promise((resolve) => setTimeout(resolve, 20));
      waits.stop();

      // One sample alone reads a thread by how it waits at that instant: taken with the worker
      // idle, since one taken as it answers can catch it between its loop and a lock (a loaded
      // machine once read it as a fifth libuv thread).
      const idle = sampleThreads(child.pid!);
      const groups = [...threadGroups(idle).values()];
      const count = (g: string) => groups.filter((x) => x === g).length;
      expect(count('main')).toBe(1);
      expect(count('libuv')).toBe(4);
      expect(count('V8 platform')).toBeGreaterThanOrEqual(1);
      // Named where Node names threads, found by elimination where it does not.
      expect(count('workers') + count('workers(sign)')).toBe(1);

      // Over the run, each thread is told by how it waited, whatever the two samples found.
      const watched = [...threadGroups(after, before, waits.seen).values()];
      expect(watched.filter((g) => g === 'libuv')).toHaveLength(4);
      expect(watched.filter((g) => g.startsWith('workers'))).toHaveLength(1);

      // As the benches read it: the samples around the work, each thread told by how it waited.
      const cpu = cpuByThread(before, after, waits.seen);
      const worker = cpu.groups.find(([g]) => g.startsWith('workers'))?.[1] ?? 0;
      expect(worker).toBeGreaterThan(0.1);
      expect(worker).toBeLessThanOrEqual(cpu.total);
      expect(cpu.groups[0][0]).toBe('main');
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('waitForPort', () => {
  it('gives up after its deadline, naming what it waited for', async () => {
    await expect(waitForPort(1, 'the reference', 300)).rejects.toThrow(/the reference: nothing answered on 127.0.0.1:1 within 0 s/);
  });
});
