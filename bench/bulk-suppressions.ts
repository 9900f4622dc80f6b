/**
 * Bulk suppression work against a real `mailsvc serve --roles api` while `/healthz` is asked every
 * 100 ms: how long a question to the same process waits while one workspace imports and exports
 * its list. In order:
 *   - import 210,000 lines (about 4.7 MB of CSV) on the transactional stream,
 *   - import the same 210,000 addresses on the broadcast stream (420,000 entries in all),
 *   - export the 420,000 entries as a CSV file (`format=csv`), read as it comes,
 *   - export them as JSON `{csv, count}` (the default answer).
 * Prints each step's duration and the /healthz latency (p50, p99, max) during it, the server's
 * peak RSS, and one summary line; exits 1 when a step's /healthz p99 is over 200 ms. Each
 * /healthz slower than that is shown on stderr as it happens, with when it was asked.
 *
 *   npm run bench -- bulk-suppressions [lines=210000]
 *   MAILSVC_BENCH_PG_URL=postgres://USER@HOST:PORT/DB npm run bench -- bulk-suppressions   # on PostgreSQL
 */
import { ensureBuilt, mailsvcSite, startMailsvc } from './lib/mailsvc.ts';
import { pgScratch } from './lib/pg-scratch.ts';
import { fmt, peakRssMb } from './lib/proc.ts';
import { benchPgUrl } from './setup.ts';

const LINES = Number(process.argv[2] ?? 210_000);
const POLL_MS = 100;
const HEALTH_TIMEOUT_MS = 10_000;
const BOUND_P99_MS = 200;

/** Asks /healthz every POLL_MS (without waiting for the last answer) and keeps each latency. */
function pollHealth(url: string) {
  const since = performance.now();
  const latencies: number[] = [];
  let timeouts = 0;
  const pending = new Set<Promise<void>>();
  const ask = () => {
    const started = performance.now();
    const p = fetch(`${url}/healthz`, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) })
      .then(async (res) => {
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
        latencies.push(performance.now() - started);
        const ms = performance.now() - started;
        if (ms > BOUND_P99_MS) console.error(`  /healthz took ${Math.round(ms)} ms, asked ${fmt((started - since) / 1000, 2)} s into the step`);
      })
      .catch((err: Error) => {
        if (err.name !== 'TimeoutError') throw err;
        timeouts += 1;
        latencies.push(HEALTH_TIMEOUT_MS);
      })
      .finally(() => pending.delete(p));
    pending.add(p);
  };
  ask();
  const timer = setInterval(ask, POLL_MS);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(pending);
      return { latencies, timeouts };
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
  const poll = pollHealth(url);
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

  for (const stream of ['transactional', 'broadcast']) {
    steps.push(
      await measured(url, `import ${fmt(LINES)} lines (${stream})`, async () => {
        const res = await fetch(`${url}/api/v1/suppressions/import`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ csv, stream }),
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
  const worstP99 = Math.max(...steps.map((s) => s.healthz_p99_ms));
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
