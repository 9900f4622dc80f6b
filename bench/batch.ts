/**
 * Messages accepted per second through POST /api/v1/emails/batch (100 messages a request)
 * against the same run's POST /api/v1/emails (one a request), and both against their ceilings:
 * the bare Fastify + better-sqlite3 routes of bench/lib/ceiling-server.ts (synchronous=FULL,
 * one insert a request, or one transaction of 100 inserts a batch). Each target is a child
 * process started fresh for each run, the targets interleaved so the machine's noise falls on
 * all of them. Prints messages/s, request p99 and CPU per message of the server process (all its
 * threads, from /proc) and, with MAILSVC_BENCH_PG_URL set, mailsvc on PostgreSQL too.
 *
 *   npm run bench -- batch [runs=3] [seconds=5]
 *   MAILSVC_BENCH_PG_URL=postgres://USER@HOST:PORT/DB npm run bench -- batch
 */
import autocannon from 'autocannon';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { machineLine } from './lib/machine.ts';
import { ensureBuilt, mailsvcSite, ROOT, startMailsvc } from './lib/mailsvc.ts';
import { pgScratch } from './lib/pg-scratch.ts';
import { cpuSeconds, fmt, showSpread, spread, startChild, type Child } from './lib/proc.ts';
import { benchPgUrl } from './setup.ts';

const runs = Number(process.argv[2] ?? 3);
const seconds = Number(process.argv[3] ?? 5);
const BATCH = 100;
/** In-flight messages alike for both shapes: 50 single sends, or 5 batches of 100 (500). */
const CONNECTIONS = { single: 50, batch: 5 };

/** About 2 KB of JSON a message, as bench/api.ts sends; each recipient its own. */
function message(domain: string, i: number) {
  const paragraph = 'Your order has shipped and is on its way. Track it from your account page at any time. ';
  return {
    from: `Shop <orders@${domain}>`,
    to: [`customer${i}@example.org`],
    subject: `Your order #${12345 + i} has shipped`,
    html: `<html><body><p>${paragraph.repeat(10)}</p></body></html>`,
    text: paragraph.repeat(10),
  };
}

type Shape = 'single' | 'batch';
type Target = `${'mailsvc' | 'pg' | 'ceiling'} ${Shape}`;
interface Run {
  messagesPerSecond: number;
  p99: number;
  cpuMsPerMessage: number;
}

async function measure(server: Child, url: string, shape: Shape, headers: Record<string, string>, domain: string): Promise<Run> {
  const body = JSON.stringify(shape === 'single' ? message(domain, 0) : Array.from({ length: BATCH }, (_, i) => message(domain, i)));
  const load = (duration: number) =>
    autocannon({
      url: `${url}/api/v1/emails${shape === 'batch' ? '/batch' : ''}`,
      method: 'POST',
      connections: CONNECTIONS[shape],
      duration,
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
  await load(1); // warm-up
  const cpuBefore = cpuSeconds(server.pid);
  const result = await load(seconds);
  const cpu = cpuSeconds(server.pid) - cpuBefore;
  const ok = result['2xx'];
  if (ok === 0 || result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${url}: ${ok} answered 2xx, ${result.non2xx} other statuses, ${result.errors} errors\n${server.output().slice(-2000)}`);
  }
  const messages = ok * (shape === 'batch' ? BATCH : 1);
  return { messagesPerSecond: messages / result.duration, p99: result.latency.p99, cpuMsPerMessage: (cpu * 1000) / messages };
}

await ensureBuilt();
const ceilingDir = mkdtempSync(join(tmpdir(), 'mailsvc-bench-ceiling-'));
const targets: Target[] = ['ceiling single', 'ceiling batch', 'mailsvc single', 'mailsvc batch', ...(benchPgUrl ? (['pg single', 'pg batch'] as const) : [])];
const results = new Map<Target, Run[]>(targets.map((t) => [t, []]));
try {
  for (let run = 0; run < runs; run++) {
    for (const target of targets) {
      const [kind, shape] = target.split(' ') as ['mailsvc' | 'pg' | 'ceiling', Shape];
      let outcome: Run;
      if (kind === 'ceiling') {
        // A fresh file each time: the batch target would otherwise start on a bigger table.
        rmSync(join(ceilingDir, 'ceiling-full.sqlite'), { force: true });
        const server = await startChild(
          process.execPath,
          ['--import', 'tsx', join(ROOT, 'bench', 'lib', 'ceiling-server.ts'), ceilingDir, 'FULL'],
          /listening on (http:\S+)/,
        );
        try {
          outcome = await measure(server, server.ready[1], shape, {}, 'bench.test');
        } finally {
          await server.stop();
        }
      } else {
        const scratch = kind === 'pg' ? await pgScratch(benchPgUrl!, 'mailsvc_bench_batch') : null;
        const site = await mailsvcSite(scratch ? { database: { client: 'pg', connection: scratch.url, pool: 10 } } : {});
        const server = await startMailsvc(site, 'api', /HTTP API listening on [\d.]+:(\d+)/);
        try {
          outcome = await measure(server, `http://127.0.0.1:${server.ready[1]}`, shape, { authorization: `Bearer ${site.apiKey}` }, site.domain);
        } finally {
          await server.stop();
          site.cleanUp();
          await scratch?.drop();
        }
      }
      results.get(target)!.push(outcome);
      console.log(
        `run ${run + 1} ${target.padEnd(14)} ${fmt(outcome.messagesPerSecond).padStart(7)} msgs/s  p99 ${outcome.p99} ms  ${fmt(outcome.cpuMsPerMessage, 3)} ms CPU/msg`,
      );
    }
  }
} finally {
  rmSync(ceilingDir, { recursive: true, force: true });
}

console.log(machineLine());
for (const target of targets) {
  const r = results.get(target)!;
  console.log(
    `${target.padEnd(14)} msgs/s ${showSpread(r.map((x) => x.messagesPerSecond))}  p99 ${showSpread(r.map((x) => x.p99))} ms  CPU/msg ${showSpread(
      r.map((x) => x.cpuMsPerMessage),
      3,
    )} ms  (min/median/max of ${r.length})`,
  );
}
const median = (t: Target, f: (r: Run) => number) => spread(results.get(t)!.map(f)).median;
const rate = (t: Target) => median(t, (r) => r.messagesPerSecond);
const pgPart = benchPgUrl ? `; PostgreSQL: batch ${fmt(rate('pg batch'))} msgs/s, ${fmt(rate('pg batch') / rate('pg single'), 2)}x its single sends` : '';
console.log(
  `batch: ${fmt(rate('mailsvc batch'))} msgs/s through batches of ${BATCH}, ${fmt(rate('mailsvc batch') / rate('mailsvc single'), 2)}x single sends (${fmt(rate('mailsvc single'))} msgs/s); ` +
    `ceiling batch ${fmt(rate('ceiling batch'))} msgs/s (${fmt(rate('mailsvc batch') / rate('ceiling batch'), 2)}x of it), ceiling single ${fmt(rate('ceiling single'))} msgs/s; ` +
    `CPU/msg batch ${fmt(
      median('mailsvc batch', (r) => r.cpuMsPerMessage),
      3,
    )} ms vs single ${fmt(
      median('mailsvc single', (r) => r.cpuMsPerMessage),
      3,
    )} ms` +
    `${pgPart} (medians of ${runs} runs, ${seconds} s each)`,
);
