// Postfix's load tools for the SMTP benches: smtp-sink as the destination, smtp-source as the
// client, and an authenticating pass-through for smtp-source, which cannot AUTH by itself: a small
// C program (auth-relay.c beside this file, compiled on first use) rather than Node, so that its
// thousands of connections a run cost next to nothing beside the server measured.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childCpu } from './proc.ts';

export const SOURCE = '/usr/sbin/smtp-source';
export const SINK = '/usr/sbin/smtp-sink';

/** Installs Debian packages whose `probe` file is missing (apt-get; needs root). */
export function ensurePackages(wanted: { probe: string; packages: string[] }[]): void {
  const missing = wanted.filter((w) => !existsSync(w.probe)).flatMap((w) => w.packages);
  if (missing.length === 0) return;
  console.log(`installing ${missing.join(' ')} (apt-get)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // Postfix asks how to configure the system's own instance: not at all, the benches bring their own.
  spawnSync('sh', ['-c', 'echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections'], { stdio: 'inherit', env });
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', ...missing]]) {
    const r = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env });
    if (r.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed; install ${missing.join(' ')} by hand`);
  }
}

export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Resolves once 127.0.0.1:`port` accepts a connection; rejects after `timeoutMs`, naming `what`. */
export async function waitForPort(port: number, what = `port ${port}`, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => (s.destroy(), resolve(true))).on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() >= deadline) throw new Error(`${what}: nothing answered on 127.0.0.1:${port} within ${Math.round(timeoutMs / 1000)} s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface Sink {
  port: number;
  /** Messages received so far. */
  count(): number;
  /** Resolves once `n` messages have arrived. */
  reached(n: number): Promise<void>;
  /** CPU seconds smtp-sink has used so far. */
  cpuSeconds(): number;
  stop(): Promise<void>;
}

/** Postfix's smtp-sink on 127.0.0.1, counting messages (its `-c` counters). */
export async function smtpSink(): Promise<Sink> {
  const port = await freePort();
  const root = process.getuid?.() === 0 ? ['-u', 'nobody'] : [];
  const child: ChildProcess = spawn(SINK, [...root, '-c', '-m', '512', `127.0.0.1:${port}`, '1024'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  let count = 0;
  let tail = '';
  let waiter: { n: number; resolve: () => void } | null = null;
  child.stdout!.on('data', (d: Buffer) => {
    tail = (tail + d.toString('latin1')).slice(-200);
    const all = [...tail.matchAll(/mesg=(\d+)/g)];
    if (all.length > 0) count = Number(all[all.length - 1][1]);
    if (waiter && count >= waiter.n) {
      waiter.resolve();
      waiter = null;
    }
  });
  const failed = new Promise<never>((_, reject) => void exited.then(([code, signal]) => reject(new Error(`smtp-sink exited (${signal ?? code}) before it listened`))));
  failed.catch(() => undefined);
  await Promise.race([waitForPort(port, 'smtp-sink'), failed]).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  return {
    port,
    count: () => count,
    reached: (n) => (count >= n ? Promise.resolve() : new Promise<void>((resolve) => (waiter = { n, resolve }))),
    cpuSeconds: childCpu(child.pid),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill();
      await exited;
    },
  };
}

export interface Source {
  /** Messages smtp-source saw accepted so far (DATA completed). */
  accepted(): number;
  /** Resolves when smtp-source exits 0, rejects when it fails. */
  done: Promise<void>;
  stop(): Promise<void>;
}

/** smtp-source: `total` messages of `bytes` over `sessions` parallel sessions, counting what is accepted (its `-c`). */
export function startSmtpSource(port: number, opts: { total: number; sessions: number; bytes: number; from: string; to: string }): Source {
  const child = spawn(
    SOURCE,
    ['-c', '-s', String(opts.sessions), '-m', String(opts.total), '-l', String(opts.bytes), '-f', opts.from, '-t', opts.to, `127.0.0.1:${port}`],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  let accepted = 0;
  let tail = '';
  child.stdout!.on('data', (d: Buffer) => {
    tail = (tail + d.toString('latin1')).slice(-40);
    const all = tail.match(/\d+(?=\r)/g);
    if (all) accepted = Number(all[all.length - 1]);
  });
  const done = exited.then(([code, signal]) => {
    if (code !== 0) throw new Error(`smtp-source exited ${signal ?? code} after ${accepted} of ${opts.total} messages accepted`);
  });
  return {
    accepted: () => accepted,
    done,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill();
      await exited;
    },
  };
}

/** smtp-source: `total` messages of `bytes` over `sessions` parallel sessions; resolves when done. */
export async function smtpSource(port: number, opts: { total: number; sessions: number; bytes: number; from: string; to: string }): Promise<void> {
  await startSmtpSource(port, opts).done;
}

/** The pass-through's build of bench/lib/auth-relay.c, compiled (again) when missing or older than its source. */
function authRelayBinary(): string {
  const source = fileURLToPath(new URL('./auth-relay.c', import.meta.url));
  const binary = fileURLToPath(new URL('../../node_modules/.cache/mailsvc-bench/auth-relay', import.meta.url));
  if (existsSync(binary) && statSync(binary).mtimeMs >= statSync(source).mtimeMs) return binary;
  ensurePackages([
    { probe: '/usr/bin/cc', packages: ['gcc'] },
    { probe: '/usr/include/stdio.h', packages: ['libc6-dev'] },
  ]);
  mkdirSync(dirname(binary), { recursive: true });
  // Built beside it and renamed into place: a bench started meanwhile sees the old one or the new.
  const building = `${binary}.${process.pid}`;
  const r = spawnSync('cc', ['-O2', '-o', building, source], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`cc -O2 -o ${building} ${source} failed (${r.error?.message ?? `exit ${r.status}`})`);
  renameSync(building, binary);
  return binary;
}

export interface AuthRelay {
  /** Where smtp-source connects (127.0.0.1). */
  port: number;
  /** CPU seconds the pass-through has used so far. */
  cpuSeconds(): number;
  close(): Promise<void>;
}

/**
 * Passes each client's session to the submission port on 127.0.0.1:`target`, authenticating it
 * with `AUTH PLAIN` as user `bench` with `key` after its HELO/EHLO (auth-relay.c, in a process
 * of its own). A refused AUTH closes that client and is reported on stderr. Without `key`, the
 * bytes are copied both ways as they are: the same hop for a target that needs no AUTH.
 */
export async function authRelay(target: number, key?: string): Promise<AuthRelay> {
  const auth = key === undefined ? [] : [`AUTH PLAIN ${Buffer.from(`\0bench\0${key}`).toString('base64')}`];
  const child = spawn(authRelayBinary(), [String(target), ...auth], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString('latin1');
      const m = /^listening (\d+)\n/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`auth-relay exited (${signal ?? code}) before listening`)));
  });
  return {
    port,
    cpuSeconds: childCpu(child.pid),
    close: async () => {
      child.kill();
      await exited;
    },
  };
}
