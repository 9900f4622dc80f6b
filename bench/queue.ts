/**
 * Claim latency against the size of the queue: the delivery worker's claim (queueRepo.claim,
 * 50 rows, shaped as the worker claims by default, and unshaped) on a recipients table of 1 k,
 * 100 k and 1 M rows, most of them finished (delivered, bounced, failed) or deferred until later,
 * with the same 1,000 rows due at every size; `due` sets how many are due (a backlog), at most
 * every row. Rows are seeded with bulk SQL, not through the API. The reference is the claim at
 * the first size in the same run; the ratio says whether a claim stays as cheap when the table
 * (or its backlog) grows.
 *
 *   npm run bench -- queue [sizes=1000,100000,1000000] [claims=20] [due=1000]
 *   MAILSVC_BENCH_PG_URL=postgres://... npm run bench -- queue   # on PostgreSQL instead of SQLite
 */
import { performance } from 'node:perf_hooks';
import { isPg, type Db } from '../src/store/db.ts';
import { queueRepo } from '../src/store/queue.ts';
import { createServices } from '../src/services.ts';
import { createLogger } from '../src/log/logger.ts';
import { pgScratch } from './lib/pg-scratch.ts';
import { benchConfig, benchPgUrl, benchSender } from './setup.ts';
import { fmt, peakRssMb, showSpread, spread } from './lib/proc.ts';

const sizes = (process.argv[2] ?? '1000,100000,1000000').split(',').map(Number);
const claims = Number(process.argv[3] ?? 20);
const DUE = Number(process.argv[4] ?? 1000);
const NOW = Date.UTC(2026, 10, 23, 12);
const RECIPIENTS_PER_MESSAGE = 10;

/** `n` recipients on n/10 messages: DUE queued and due, the rest finished or deferred for later. */
async function seed(db: Db, workspaceId: number, n: number): Promise<void> {
  const pg = isPg(db);
  const series = (count: number, body: string) =>
    pg
      ? `${body.replace(/\bFROM series\b/, `FROM generate_series(1, ${count}) AS series(x)`)}`
      : `WITH RECURSIVE series(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM series WHERE x < ${count}) ${body}`;
  const messages = Math.ceil(n / RECIPIENTS_PER_MESSAGE);
  await db.raw(
    series(
      messages,
      `INSERT INTO messages (workspace_id, api_key_id, domain, stream, status, source, from_header, from_address, subject, envelope, message_id_header, created_at)
       SELECT ${workspaceId}, NULL, 'bench.test', 'transactional', 'delivered', 'api', 'a@bench.test', 'a@bench.test', 'Hello', '{}', '<' || x || '@bench.test>', ${NOW - 86_400_000} FROM series`,
    ),
  );
  const first = Number((await db('messages').min({ id: 'id' }).first())!.id);
  // x < DUE: queued, due now; then per 10 rows: 7 delivered, 1 bounced, 1 failed, 1 deferred until later.
  const status = `CASE WHEN x <= ${DUE} THEN 'queued' WHEN x % 10 = 0 THEN 'deferred' WHEN x % 10 = 1 THEN 'bounced' WHEN x % 10 = 2 THEN 'failed' ELSE 'delivered' END`;
  const due = `CASE WHEN x <= ${DUE} THEN ${NOW - 1000} - x WHEN x % 10 = 0 THEN ${NOW + 60_000} + x ELSE NULL END`;
  await db.raw(
    series(
      n,
      `INSERT INTO recipients (message_id, workspace_id, address, domain, kind, status, attempts, due_at, first_due_at, created_at, updated_at)
       SELECT ${first} + (x - 1) / ${RECIPIENTS_PER_MESSAGE}, ${workspaceId}, 'user' || x || '@example.org', 'example.org', 'to', ${status}, 0, ${due}, ${NOW - 86_400_000}, ${NOW - 86_400_000}, ${NOW - 86_400_000} FROM series`,
    ),
  );
  if (pg) await db.raw('ANALYZE recipients');
  else await db.raw('ANALYZE');
}

/** A shape whose caps leave the 50 rows whole (every seeded row is to one domain): the cost of the shaped statement itself. */
const SHAPE = { exclude: [], caps: [], defaultCap: 50 };

const results: { size: number; ms: number[] }[] = [];
for (const size of sizes) {
  // A database of its own on PostgreSQL too: rows left by an earlier size or run would be due here.
  const scratch = benchPgUrl ? await pgScratch(benchPgUrl, 'mailsvc_bench_queue') : null;
  const { config, cleanUp } = benchConfig(scratch ? { database: { client: 'pg', connection: scratch.url } } : {});
  const services = await createServices(config, { log: createLogger('silent') });
  try {
    const { workspaceId } = await benchSender(services);
    const seeding = performance.now();
    await seed(services.db, workspaceId, size);
    const seeded = performance.now() - seeding;
    const ms: number[] = [];
    const unshaped: number[] = [];
    for (let i = 0; i < claims; i++) {
      for (const shape of [SHAPE, undefined]) {
        const started = performance.now();
        const rows = await queueRepo.claim(services.db, { owner: 'bench', now: NOW, leaseMs: 60_000, limit: 50, shape });
        (shape ? ms : unshaped).push(performance.now() - started);
        if (rows.length !== 50) throw new Error(`claim ${i + 1} at ${size} rows took ${rows.length} rows, not 50`);
      }
    }
    results.push({ size, ms });
    console.log(
      `${fmt(size).padStart(9)} rows, ${fmt(Math.min(DUE, size))} due (seeded in ${fmt(seeded / 1000, 1)} s): claim of 50 ${showSpread(ms, 2)} ms, unshaped ${showSpread(unshaped, 2)} ms (min/median/max of ${claims})`,
    );
  } finally {
    await services.close();
    cleanUp();
    await scratch?.drop();
  }
}
const reference = spread(results[0].ms).median;
const largest = results[results.length - 1];
console.log(
  `queue: claim of 50 at ${results.map((r) => `${fmt(r.size)} rows ${fmt(spread(r.ms).median, 2)} ms`).join(', ')} (medians); ` +
    `${fmt(largest.size)} vs ${fmt(results[0].size)}: ${fmt(spread(largest.ms).median / reference, 2)}x; CPU ${fmt(process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6, 1)} s, peak RSS ${peakRssMb(process.pid)} MB`,
);
