/**
 * Accepting mail over HTTP: POST /emails throughput with durable commits (SQLite WAL,
 * synchronous=FULL, or PostgreSQL with MAILSVC_BENCH_PG_URL), and how many requests share
 * each commit.
 *
 *   npx tsx bench/accept.ts [messages=2000] [concurrency=50]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/load.ts';
import { createLogger } from '../src/log/logger.ts';
import { startServer } from '../src/main.ts';

const total = Number(process.argv[2] ?? 2000);
const concurrency = Number(process.argv[3] ?? 50);
const dataDir = mkdtempSync(join(tmpdir(), 'mailsvc-bench-'));
const pg = process.env.MAILSVC_BENCH_PG_URL;

const config = loadConfig({
  env: {},
  overrides: {
    dataDir,
    database: pg ? { client: 'pg', connection: pg } : { client: 'sqlite', connection: null },
    server: { hostname: 'mail.bench.test' },
    http: { host: '127.0.0.1', port: 0 },
    log: { level: 'silent' },
  },
});
const server = await startServer(config, { roles: ['api'], overrides: { log: createLogger('silent') } });
const { services } = server;
const { workspace, apiKey } = await services.tenancy.createWorkspace(`bench${Date.now()}`);
await services.tenancy.setLimits(workspace.name, { perMinute: 1_000_000, perHour: 10_000_000 });
await services.domains.add(workspace.id, `bench${workspace.id}.test`);
await services.domains.forceVerify(null, `bench${workspace.id}.test`);

const body = (i: number) =>
  JSON.stringify({ from: `news@bench${workspace.id}.test`, to: [`user${i}@example.org`], subject: `Hello ${i}`, html: '<p>Hello</p>', text: 'Hello' });

let next = 0;
let failed = 0;
const before = services.committer.stats();
const started = performance.now();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < total) {
      const i = next++;
      const res = await fetch(`${server.url}/api/v1/emails`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: body(i),
      });
      await res.arrayBuffer();
      if (res.status !== 201) failed += 1;
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
const after = services.committer.stats();
const commits = after.commits - before.commits;
const jobs = after.jobs - before.jobs;
console.log(
  JSON.stringify({
    database: pg ? 'postgresql' : 'sqlite (WAL, synchronous=FULL)',
    messages: total,
    concurrency,
    failed,
    seconds: Number(seconds.toFixed(2)),
    messages_per_second: Math.round(total / seconds),
    commits,
    writes_per_commit: Number((jobs / commits).toFixed(1)),
  }),
);
await server.close();
rmSync(dataDir, { recursive: true, force: true });
