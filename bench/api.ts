/**
 * POST /api/v1/emails under load against its ceilings, in one run: autocannon with 50
 * connections against, in turn,
 *   - `mailsvc serve --roles api` (SQLite, durable group commit, rate limits raised),
 *   - with MAILSVC_BENCH_PG_URL set, the same on a scratch PostgreSQL database of that server
 *     (`database.pool` 10), so one process on each database is measured in the same run,
 *   - a bare Fastify route parsing the same body and inserting one row with better-sqlite3,
 *     WAL, synchronous=NORMAL, and the same with synchronous=FULL (bench/lib/ceiling-server.ts),
 * each a child process of its own, started fresh for every run, the targets interleaved so that
 * the machine's noise falls on all of them. Prints req/s, p50, p99 and server CPU per request
 * (from /proc; for PostgreSQL also its server processes' CPU, when it runs on this machine) for
 * each, the ratios to the ceilings, and one summary line.
 *
 *   npm run bench -- api [runs=3] [seconds=5] [connections=50]
 *   MAILSVC_BENCH_PG_URL=postgres://USER@HOST:PORT/DB npm run bench -- api   # adds PostgreSQL
 *   MAILSVC_BENCH_PROFILE=DIR npm run bench -- api   # also writes a CPU profile of each mailsvc run
 */
import autocannon from 'autocannon';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import pg from 'pg';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt, mailsvcSite, ROOT, startMailsvc } from './lib/mailsvc.ts';
import { pgScratch } from './lib/pg-scratch.ts';
import { cpuSeconds, fmt, showSpread, spread, startChild, type Child } from './lib/proc.ts';
import { benchPgUrl } from './setup.ts';

const runs = Number(process.argv[2] ?? 3);
const seconds = Number(process.argv[3] ?? 5);
const connections = Number(process.argv[4] ?? 50);

/** About 2 KB of JSON, the same for every target. */
function body(domain: string): string {
  const paragraph = 'Your order has shipped and is on its way. Track it from your account page at any time. ';
  return JSON.stringify({
    from: `Shop <orders@${domain}>`,
    to: ['customer@example.org'],
    subject: 'Your order #12345 has shipped',
    html: `<html><body><p>${paragraph.repeat(10)}</p></body></html>`,
    text: paragraph.repeat(10),
  });
}

interface Run {
  rps: number;
  p50: number;
  p99: number;
  cpuMsPerRequest: number;
  /** PostgreSQL's server processes, for the pg target; 0 otherwise. */
  dbCpuMsPerRequest: number;
  cores: number;
}

type Target = 'mailsvc' | 'pg' | 'NORMAL' | 'FULL';
const targets: Target[] = benchPgUrl ? ['NORMAL', 'FULL', 'mailsvc', 'pg'] : ['NORMAL', 'FULL', 'mailsvc'];

async function load(url: string, headers: Record<string, string>, payload: string, duration: number) {
  return autocannon({ url: `${url}/api/v1/emails`, method: 'POST', connections, duration, headers: { 'content-type': 'application/json', ...headers }, body: payload });
}

/**
 * CPU seconds used so far by the PostgreSQL server processes serving `databaseUrl` (read from
 * /proc: the server must run on this machine), so the database's share of a request is counted.
 */
async function pgBackendCpu(databaseUrl: string): Promise<() => Promise<number>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const pids = async () =>
    (await client.query('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()')).rows.map((r) => Number(r.pid));
  const cpu = (pid: number) => (existsSync(`/proc/${pid}/stat`) ? cpuSeconds(pid) : 0);
  const start = new Map((await pids()).map((pid) => [pid, cpu(pid)]));
  // Sessions opened during the run count from nothing; one that ended before the end is lost.
  return async () => {
    const used = (await pids()).reduce((n, pid) => n + cpu(pid) - (start.get(pid) ?? 0), 0);
    await client.end();
    return used;
  };
}

async function measure(server: Child, url: string, headers: Record<string, string>, payload: string, databaseUrl?: string): Promise<Run> {
  await load(url, headers, payload, 1); // warm-up: JIT, caches, page cache
  const database = databaseUrl ? await pgBackendCpu(databaseUrl) : null;
  const cpuBefore = cpuSeconds(server.pid);
  const result = await load(url, headers, payload, seconds);
  const cpu = cpuSeconds(server.pid) - cpuBefore;
  const dbCpu = database ? await database() : 0;
  const ok = result['2xx'];
  if (ok === 0 || result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${url}: ${ok} answered 2xx, ${result.non2xx} other statuses, ${result.errors} errors\n${server.output().slice(-2000)}`);
  }
  return {
    rps: ok / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuMsPerRequest: (cpu * 1000) / ok,
    dbCpuMsPerRequest: (dbCpu * 1000) / ok,
    cores: cpu / result.duration,
  };
}

await ensureBuilt();
const ceilingDir = mkdtempSync(join(tmpdir(), 'mailsvc-bench-ceiling-'));
const results: Record<Target, Run[]> = { mailsvc: [], pg: [], NORMAL: [], FULL: [] };
try {
  for (let run = 0; run < runs; run++) {
    for (const target of targets) {
      if (target === 'mailsvc' || target === 'pg') {
        const scratch = target === 'pg' ? await pgScratch(benchPgUrl!, 'mailsvc_bench_api') : null;
        const site = await mailsvcSite(scratch ? { database: { client: 'pg', connection: scratch.url, pool: 10 } } : {});
        const server = await startMailsvc(site, 'api', /HTTP API listening on [\d.]+:(\d+)/);
        try {
          results[target].push(await measure(server, `http://127.0.0.1:${server.ready[1]}`, { authorization: `Bearer ${site.apiKey}` }, body(site.domain), scratch?.url));
        } finally {
          await server.stop();
          site.cleanUp();
          await scratch?.drop();
        }
      } else {
        const server = await startChild(
          process.execPath,
          ['--import', 'tsx', join(ROOT, 'bench', 'lib', 'ceiling-server.ts'), ceilingDir, target],
          /listening on (http:\S+)/,
        );
        try {
          results[target].push(await measure(server, server.ready[1], {}, body('bench.test')));
        } finally {
          await server.stop();
        }
      }
      const last = results[target].at(-1)!;
      const db = target === 'pg' ? `  + ${fmt(last.dbCpuMsPerRequest, 3)} ms PostgreSQL CPU/req` : '';
      console.log(
        `run ${run + 1} ${target.padEnd(7)} ${fmt(last.rps).padStart(7)} req/s  p50 ${last.p50} ms  p99 ${last.p99} ms  ${fmt(last.cpuMsPerRequest, 3)} ms CPU/req  ${fmt(last.cores, 2)} cores${db}`,
      );
    }
  }
} finally {
  rmSync(ceilingDir, { recursive: true, force: true });
}

const label: Record<Target, string> = { mailsvc: 'mailsvc api', pg: 'mailsvc api pg', NORMAL: 'ceiling NORMAL', FULL: 'ceiling FULL' };
for (const target of ['mailsvc', ...(benchPgUrl ? ['pg' as const] : []), 'FULL', 'NORMAL'] as Target[]) {
  const r = results[target];
  console.log(
    `${label[target].padEnd(15)} req/s ${showSpread(r.map((x) => x.rps))}  p50 ${showSpread(r.map((x) => x.p50))} ms  p99 ${showSpread(r.map((x) => x.p99))} ms  CPU/req ${showSpread(
      r.map((x) => x.cpuMsPerRequest),
      3,
    )} ms  (min/median/max of ${r.length})`,
  );
}
const median = (t: Target, f: (r: Run) => number) => spread(results[t].map(f)).median;
const ratio = (a: number, b: number) => fmt(a / b, 2);
console.log(
  `api: mailsvc ${fmt(median('mailsvc', (r) => r.rps))} req/s p99 ${median('mailsvc', (r) => r.p99)} ms ${fmt(
    median('mailsvc', (r) => r.cpuMsPerRequest),
    3,
  )} ms CPU/req; ` +
    `vs FULL ${fmt(median('FULL', (r) => r.rps))} req/s: ${ratio(
      median('mailsvc', (r) => r.rps),
      median('FULL', (r) => r.rps),
    )}x req/s, ${ratio(
      median('mailsvc', (r) => r.p99),
      median('FULL', (r) => r.p99),
    )}x p99; ` +
    `vs NORMAL ${fmt(median('NORMAL', (r) => r.rps))} req/s: ${ratio(
      median('mailsvc', (r) => r.rps),
      median('NORMAL', (r) => r.rps),
    )}x req/s; ` +
    `CPU/req ${ratio(
      median('mailsvc', (r) => r.cpuMsPerRequest),
      median('FULL', (r) => r.cpuMsPerRequest),
    )}x FULL's (medians of ${runs} runs, ${seconds} s each, ${connections} connections)` +
    (benchPgUrl
      ? `; PostgreSQL ${fmt(median('pg', (r) => r.rps))} req/s p99 ${median('pg', (r) => r.p99)} ms ${fmt(
          median('pg', (r) => r.cpuMsPerRequest),
          3,
        )} ms CPU/req ` +
        `+ ${fmt(
          median('pg', (r) => r.dbCpuMsPerRequest),
          3,
        )} ms in the database: ` +
        `${ratio(
          median('pg', (r) => r.rps),
          median('mailsvc', (r) => r.rps),
        )}x SQLite's req/s`
      : ''),
);
