/**
 * Bulk suppression work against a real `mailsvc serve --roles api` while `/healthz` is asked every
 * 100 ms: how long a question to the same process waits while one workspace imports and exports
 * its list. In order:
 *   - import 210,000 lines (about 4.7 MB of CSV) on the transactional stream,
 *   - import the same 210,000 addresses on the broadcast stream (420,000 entries in all),
 *   - export the 420,000 entries as a CSV file (`format=csv`), read as it comes,
 *   - export them as JSON `{csv, count}` (the default answer).
 * First /healthz alone for 5 s (what the machine adds when nothing else is asked). Prints each
 * step's duration and the /healthz latency (p50, p99, max) during it, the server's
 * peak RSS, and one summary line; exits 1 when a step's /healthz p99 is over 200 ms. Each
 * /healthz slower than that is shown on stderr as it happens, with when it was asked.
 *
 *   npm run bench -- bulk-suppressions [lines=210000]
 *   MAILSVC_BENCH_PG_URL=postgres://USER@HOST:PORT/DB npm run bench -- bulk-suppressions   # on PostgreSQL
 */
import { Worker } from 'node:worker_threads';
import { ensureBuilt, mailsvcSite, startMailsvc } from './lib/mailsvc.ts';
import { pgScratch } from './lib/pg-scratch.ts';
import { fmt, peakRssMb } from './lib/proc.ts';
import { benchPgUrl } from './setup.ts';

const LINES = Number(process.argv[2] ?? 210_000);
const POLL_MS = 100;
const HEALTH_TIMEOUT_MS = 10_000;
const BOUND_P99_MS = 200;

/**
 * Asks /healthz every POLL_MS (without waiting for the last answer) and keeps each latency. It
 * runs in a thread of its own, so that this process sending the import or reading the export
 * does not delay the questions or their answers.
 */
const POLLER = `
const { parentPort, workerData: { url, pollMs, timeoutMs, boundMs } } = require('node:worker_threads');
let since = 0;
const latencies = [];
let timeouts = 0;
const pending = new Set();
const ask = () => {
  const started = performance.now();
  const p = fetch(url + '/healthz', { signal: AbortSignal.timeout(timeoutMs) })
    .then(async (res) => {
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error('/healthz answered ' + res.status);
      const ms = performance.now() - started;
      latencies.push(ms);
      if (ms > boundMs) parentPort.postMessage({ slow: ms, at: (started - since) / 1000 });
    })
    .catch((err) => {
      if (err.name !== 'TimeoutError') throw err;
      timeouts += 1;
      latencies.push(timeoutMs);
    })
    .finally(() => pending.delete(p));
  pending.add(p);
};
let timer;
// One question first, not counted: this thread's first request pays for setting up fetch.
fetch(url + '/healthz').then((res) => res.arrayBuffer()).then(() => {
  since = performance.now();
  ask();
  timer = setInterval(ask, pollMs);
  parentPort.postMessage({ ready: true });
});
parentPort.once('message', async () => {
  clearInterval(timer);
  await Promise.all(pending);
  parentPort.postMessage({ latencies, timeouts });
});
`;

async function pollHealth(url: string) {
  const worker = new Worker(POLLER, { eval: true, workerData: { url, pollMs: POLL_MS, timeoutMs: HEALTH_TIMEOUT_MS, boundMs: BOUND_P99_MS } });
  let result: ((r: { latencies: number[]; timeouts: number }) => void) | null = null;
  let ready: (() => void) | null = null;
  const started = new Promise<void>((resolve) => (ready = resolve));
  worker.on('message', (m: { ready?: boolean; slow?: number; at?: number; latencies?: number[]; timeouts?: number }) => {
    if (m.ready) ready!();
    else if (m.slow !== undefined) console.error(`  /healthz took ${Math.round(m.slow)} ms, asked ${fmt(m.at!, 2)} s into the step`);
    else result?.({ latencies: m.latencies!, timeouts: m.timeouts! });
  });
  await started;
  return {
    async stop() {
      const done = new Promise<{ latencies: number[]; timeouts: number }>((resolve) => (result = resolve));
      worker.postMessage('stop');
      const r = await done;
      await worker.terminate();
      return r;
    },
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

interface Step {
  step: string;
  seconds: number;
  healthz_asked: number;
  healthz_p50_ms: number;
  healthz_p99_ms: number;
  healthz_max_ms: number;
  healthz_timeouts: number;
  detail: string;
}

async function measured(url: string, step: string, work: () => Promise<string>): Promise<Step> {
  const poll = await pollHealth(url);
  const started = performance.now();
  const detail = await work();
  const seconds = (performance.now() - started) / 1000;
  const { latencies, timeouts } = await poll.stop();
  const sorted = [...latencies].sort((a, b) => a - b);
  const round = (n: number) => Number(n.toFixed(1));
  return {
    step,
    seconds: Number(seconds.toFixed(2)),
    healthz_asked: sorted.length,
    healthz_p50_ms: round(percentile(sorted, 50)),
    healthz_p99_ms: round(percentile(sorted, 99)),
    healthz_max_ms: round(sorted.at(-1)!),
    healthz_timeouts: timeouts,
    detail,
  };
}

await ensureBuilt();
const scratch = benchPgUrl ? await pgScratch(benchPgUrl) : null;
const site = await mailsvcSite(scratch ? { database: { client: 'pg', connection: scratch.url, pool: 10 } } : {});
const server = await startMailsvc(site, 'api', /HTTP API listening on [\d.]+:(\d+)/);
const url = `http://127.0.0.1:${server.ready[1]}`;
const auth = { authorization: `Bearer ${site.apiKey}` };
try {
  const csv = `address\n${Array.from({ length: LINES }, (_, i) => `user${String(i).padStart(6, '0')}@example.org`).join('\n')}\n`;
  const steps: Step[] = [];

  // The same questions with nothing else asked of the server: what the machine itself adds.
  const idleSeconds = 5;
  steps.push(await measured(url, 'idle', () => new Promise((resolve) => setTimeout(() => resolve(`${idleSeconds} s`), idleSeconds * 1000))));

  for (const stream of ['transactional', 'broadcast']) {
    const payload = Buffer.from(JSON.stringify({ csv, stream }));
    steps.push(
      await measured(url, `import ${fmt(LINES)} lines (${stream})`, async () => {
        const res = await fetch(`${url}/api/v1/suppressions/import`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: payload,
        });
        const body = (await res.json()) as { added: number; existing: number; chunks: number; problems: unknown[] };
        if (res.status !== 200 || body.added !== LINES) throw new Error(`import: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
        return `${fmt(csv.length / 1e6, 1)} MB, added ${fmt(body.added)} in ${fmt(body.chunks)} transactions`;
      }),
    );
  }

  for (const format of ['csv', 'json']) {
    steps.push(
      await measured(url, `export ${fmt(2 * LINES)} entries (${format})`, async () => {
        const res = await fetch(`${url}/api/v1/suppressions/export?format=${format}`, { headers: auth });
        if (res.status !== 200) throw new Error(`export: ${res.status} ${await res.text()}`);
        // Read as it comes, counting lines, as a client saving the file would.
        let bytes = 0;
        let newlines = 0;
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          bytes += chunk.length;
          for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) newlines += 1;
        }
        const rows = format === 'csv' ? newlines - 1 : 0;
        if (format === 'csv' && rows !== 2 * LINES) throw new Error(`export: ${rows} rows, expected ${2 * LINES}`);
        return `${fmt(bytes / 1e6, 1)} MB${format === 'csv' ? `, ${fmt(rows)} rows` : ''}, ${res.headers.get('content-disposition') ?? 'no Content-Disposition'}`;
      }),
    );
  }

  for (const s of steps) {
    console.log(
      `${s.step.padEnd(42)} ${fmt(s.seconds, 2).padStart(7)} s   /healthz p50 ${fmt(s.healthz_p50_ms, 1)} ms, p99 ${fmt(s.healthz_p99_ms, 1)} ms, max ${fmt(s.healthz_max_ms, 1)} ms (${s.healthz_asked} asked, ${s.healthz_timeouts} timed out)   ${s.detail}`,
    );
  }
  const worstP99 = Math.max(...steps.filter((s) => s.step !== 'idle').map((s) => s.healthz_p99_ms));
  const summary = {
    database: scratch ? 'pg' : 'sqlite',
    lines: LINES,
    steps,
    server_peak_rss_mb: peakRssMb(server.pid),
    worst_healthz_p99_ms: worstP99,
    bound_p99_ms: BOUND_P99_MS,
    within_bound: worstP99 < BOUND_P99_MS,
  };
  console.log(JSON.stringify(summary));
  if (!summary.within_bound) process.exitCode = 1;
} finally {
  await server.stop();
  site.cleanUp();
  await scratch?.drop();
}
