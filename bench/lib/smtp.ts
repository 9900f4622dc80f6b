// Postfix's load tools for the SMTP benches: smtp-sink as the destination, smtp-source as the
// client, and an authenticating pass-through for smtp-source, which cannot AUTH by itself.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

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

export async function waitForPort(port: number): Promise<void> {
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => (s.destroy(), resolve(true))).on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface Sink {
  port: number;
  /** Messages received so far. */
  count(): number;
  /** Resolves once `n` messages have arrived. */
  reached(n: number): Promise<void>;
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
  await waitForPort(port);
  return {
    port,
    count: () => count,
    reached: (n) => (count >= n ? Promise.resolve() : new Promise<void>((resolve) => (waiter = { n, resolve }))),
    stop: async () => {
      child.kill();
      await exited;
    },
  };
}

/** smtp-source: `total` messages of `bytes` over `sessions` parallel sessions; resolves when done. */
export async function smtpSource(port: number, opts: { total: number; sessions: number; bytes: number; from: string; to: string }): Promise<void> {
  const child = spawn(
    SOURCE,
    ['-s', String(opts.sessions), '-m', String(opts.total), '-l', String(opts.bytes), '-f', opts.from, '-t', opts.to, `127.0.0.1:${port}`],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`smtp-source exited ${code}`);
}

/** Passes a client's session to the submission port, authenticating it after its HELO/EHLO. */
export function authRelay(target: number, key: string): Server {
  const auth = `AUTH PLAIN ${Buffer.from(`\0bench\0${key}`).toString('base64')}\r\n`;
  return createServer((client: Socket) => {
    const upstream = connect(target, '127.0.0.1');
    // Like both SMTP ends: no Nagle delay on small replies and commands.
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const end = () => (client.destroy(), upstream.destroy());
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    let phase: 'greeting' | 'helo' | 'auth' | 'pipe' = 'greeting';
    let pending = '';
    let heloReply = '';
    const held: Buffer[] = [];
    const finalLine = (text: string) => /(^|\r\n)\d{3} [^\r\n]*\r\n$/.test(text);
    client.on('data', (d: Buffer) => {
      if (phase === 'pipe') return void upstream.write(d);
      if (phase === 'greeting' && /^(HELO|EHLO) /i.test(d.toString('latin1'))) {
        phase = 'helo';
        return void upstream.write(d);
      }
      held.push(d);
    });
    upstream.on('data', (d: Buffer) => {
      if (phase === 'pipe' || phase === 'greeting') return void client.write(d);
      pending += d.toString('latin1');
      if (!finalLine(pending)) return;
      if (phase === 'helo') {
        heloReply = pending;
        pending = '';
        phase = 'auth';
        return void upstream.write(auth);
      }
      if (!pending.startsWith('235')) throw new Error(`AUTH refused: ${pending}`);
      phase = 'pipe';
      client.write(heloReply, 'latin1');
      for (const b of held.splice(0)) upstream.write(b);
    });
  });
}
