/**
 * Scaling out: accepted and delivered messages per second with 1, 2 and 3 `mailsvc serve`
 * processes (roles api and delivery) on one PostgreSQL database, and one process on SQLite as
 * the reference, all in one run. Each process is a real child (bin/mailsvc) with its own HTTP
 * port and EHLO name; the requests go round-robin to them; every process delivers to one SMTP
 * sink on loopback through a real DNS server, and the sink counts who delivered what.
 *
 *   MAILSVC_BENCH_PG_URL=postgres://USER@HOST:PORT/DB npx tsx bench/scale.ts [messages=3000] [concurrency=60] [pool=10] [rounds=1]
 *
 * The PostgreSQL URL names a database the bench may create scratch databases from (one per
 * configuration, dropped afterwards). Accepted/s runs from the first request to the last 201;
 * delivered/s from the first message at the sink to the last. Both run at the same time, as
 * in production: a process accepting also delivers.
 *
 * MAILSVC_BENCH_CONFIGS=sqlite1,pg1 runs only the configurations named; with
 * MAILSVC_BENCH_PROFILE=DIR each process writes a CPU profile there on exit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { loadConfig } from '../src/config/load.ts';
import { createLogger } from '../src/log/logger.ts';
import { createServices } from '../src/services.ts';
import { startTestDns } from '../test/helpers/dns-server.ts';
import { pgScratch } from './lib/pg-scratch.ts';
import { spread } from './lib/proc.ts';
import { benchPgUrl, benchSender } from './setup.ts';

const total = Number(process.argv[2] ?? 3000);
const concurrency = Number(process.argv[3] ?? 60);
const pool = Number(process.argv[4] ?? 10);
const roundCount = Number(process.argv[5] ?? 1);
const CLI = new URL('../bin/mailsvc', import.meta.url).pathname;

if (!benchPgUrl) {
  console.error('bench/scale.ts needs PostgreSQL: set MAILSVC_BENCH_PG_URL=postgres://USER@HOST:PORT/DB');
  process.exit(2);
}

// The sink: accepts everything, records when each message arrived and from which EHLO name.
const arrivals: { at: number; helo: string }[] = [];
let arrived: () => void = () => undefined;
const sink = new SMTPServer({
  logger: false,
  authOptional: true,
  disabledCommands: ['AUTH', 'STARTTLS'],
  onData(stream, session, callback) {
    stream.on('data', () => undefined);
    stream.on('end', () => {
      arrivals.push({ at: performance.now(), helo: session.hostNameAppearsAs });
      arrived();
      callback();
    });
  },
});
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', () => resolve()));
const sinkPort = (sink.server.address() as AddressInfo).port;
const dns = await startTestDns();
dns.set('dest.test', 'MX', { exchange: 'mx.dest.test', priority: 10 });
dns.set('mx.dest.test', 'A', '127.0.0.1');

interface Store {
  database: Record<string, unknown>;
  drop(): Promise<void>;
}

async function scratch(kind: 'sqlite' | 'pg'): Promise<Store> {
  if (kind === 'sqlite') return { database: { client: 'sqlite', connection: null }, drop: async () => undefined };
  const db = await pgScratch(benchPgUrl!, 'mailsvc_bench_scale');
  return { database: { client: 'pg', connection: db.url, pool }, drop: db.drop };
}

async function serve(configFile: string): Promise<{ child: ChildProcess; url: string }> {
  const profileDir = process.env.MAILSVC_BENCH_PROFILE;
  const nodeArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const child = spawn(process.execPath, [...nodeArgs, CLI, '--config', configFile, 'serve', '--roles', 'api,delivery', '--http-port', '0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let head = '';
  const port = await new Promise<number>((resolve, reject) => {
    const onData = (d: Buffer): void => {
      head += d.toString();
      const m = /HTTP API listening on [\d.]+:(\d+)/.exec(head);
      if (!m) return;
      child.stderr!.off('data', onData).resume();
      resolve(Number(m[1]));
    };
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${head}`)));
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

interface Result {
  database: 'sqlite' | 'postgresql';
  processes: number;
  accepted_per_second: number;
  delivered_per_second: number;
  /** Share of the deliveries by each process, in %. */
  shares: number[];
}

async function run(kind: 'sqlite' | 'pg', processes: number): Promise<Result> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mailsvc-bench-scale-'));
  const store = await scratch(kind);
  const base = {
    dataDir,
    database: store.database,
    http: { host: '127.0.0.1' },
    log: { level: 'info' },
    dns: { servers: [dns.address], timeout: 2 },
    delivery: { port: sinkPort },
  };
  const setupFile = join(dataDir, 'setup.json');
  writeFileSync(setupFile, JSON.stringify({ ...base, server: { hostname: 'setup.bench.test' } }));
  const setup = await createServices(loadConfig({ file: setupFile, env: {} }), { log: createLogger('silent') });
  const { apiKey, domain } = await benchSender(setup);
  await setup.close();

  const nodes = await Promise.all(
    Array.from({ length: processes }, (_, i) => {
      const file = join(dataDir, `node${i}.json`);
      writeFileSync(file, JSON.stringify({ ...base, server: { hostname: `node${i}.bench.test` } }));
      return serve(file);
    }),
  );
  arrivals.length = 0;
  const allArrived = new Promise<void>((resolve) => (arrived = () => arrivals.length >= total && resolve()));

  let next = 0;
  let failed = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const res = await fetch(`${nodes[i % processes]!.url}/api/v1/emails`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ from: `news@${domain}`, to: [`user${i}@dest.test`], subject: `Hello ${i}`, html: '<p>Hello</p>', text: 'Hello' }),
        });
        await res.arrayBuffer();
        if (res.status !== 201) failed++;
      }
    }),
  );
  const acceptSeconds = (performance.now() - started) / 1000;
  if (failed > 0) throw new Error(`${failed} requests were refused`);
  await allArrived;
  const first = arrivals[0]!.at;
  const last = arrivals[arrivals.length - 1]!.at;

  for (const node of nodes) {
    node.child.kill('SIGTERM');
    await once(node.child, 'exit');
  }
  await store.drop();
  rmSync(dataDir, { recursive: true, force: true });
  const by = nodes.map((_, i) => arrivals.filter((a) => a.helo === `node${i}.bench.test`).length);
  return {
    database: kind === 'pg' ? 'postgresql' : 'sqlite',
    processes,
    accepted_per_second: Math.round(total / acceptSeconds),
    delivered_per_second: Math.round((total - 1) / ((last - first) / 1000)),
    shares: by.map((n) => Math.round((100 * n) / total)),
  };
}

// MAILSVC_BENCH_CONFIGS=sqlite1,pg1 runs only those (to compare two builds, say).
const only = process.env.MAILSVC_BENCH_CONFIGS?.split(',');
const configs = (
  [
    ['sqlite', 1],
    ['pg', 1],
    ['pg', 2],
    ['pg', 3],
  ] as const
).filter(([kind, n]) => !only || only.includes(`${kind}${n}`));
// Each round runs every configuration once, so a slow spell of the machine hits them alike; the
// ratios are taken round by round, then their median.
const rounds: Result[][] = [];
for (let round = 1; round <= roundCount; round++) {
  const results: Result[] = [];
  for (const [kind, processes] of configs) {
    const r = await run(kind, processes);
    results.push(r);
    console.log(JSON.stringify({ round, ...r }));
  }
  rounds.push(results);
}
if (configs.length === 4) {
  const median = (values: number[]) => Number(spread(values).median.toFixed(2));
  const ratio = (pick: (rs: Result[]) => number) => ({ median: median(rounds.map(pick)), each: rounds.map((rs) => Number(pick(rs).toFixed(2))) });
  console.log(
    JSON.stringify({
      messages: total,
      concurrency,
      pool,
      rounds: roundCount,
      pg1_vs_sqlite: {
        accepted: ratio((rs) => rs[1]!.accepted_per_second / rs[0]!.accepted_per_second),
        delivered: ratio((rs) => rs[1]!.delivered_per_second / rs[0]!.delivered_per_second),
      },
      pg3_vs_pg1: {
        accepted: ratio((rs) => rs[3]!.accepted_per_second / rs[1]!.accepted_per_second),
        delivered: ratio((rs) => rs[3]!.delivered_per_second / rs[1]!.delivered_per_second),
      },
      pg1_accepted_per_second: spread(rounds.map((rs) => rs[1]!.accepted_per_second)),
      largest_share_with_3: Math.max(...rounds.flatMap((rs) => rs[3]!.shares)),
    }),
  );
}
sink.close();
await dns.close();
