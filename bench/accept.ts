/**
 * Accepting mail over HTTP: POST /emails throughput with durable commits (SQLite WAL,
 * synchronous=FULL, or PostgreSQL with MAILSVC_BENCH_PG_URL), and how many requests share
 * each commit.
 *
 *   npx tsx bench/accept.ts [messages=2000] [concurrency=50]
 */
import { createLogger } from '../src/log/logger.ts';
import { startServer } from '../src/main.ts';
import { benchConfig, benchPgUrl as pg, benchSender } from './setup.ts';

const total = Number(process.argv[2] ?? 2000);
const concurrency = Number(process.argv[3] ?? 50);
const { config, cleanUp } = benchConfig({ http: { host: '127.0.0.1', port: 0 } });
const server = await startServer(config, { roles: ['api'], overrides: { log: createLogger('silent') } });
const { services } = server;
const { apiKey, domain } = await benchSender(services);

const body = (i: number) => JSON.stringify({ from: `news@${domain}`, to: [`user${i}@example.org`], subject: `Hello ${i}`, html: '<p>Hello</p>', text: 'Hello' });

let next = 0;
let failed = 0;
const before = services.accept.commitStats();
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
const after = services.accept.commitStats();
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
    // Messages of one commit share a job (AcceptService.writeMany), so count messages, not jobs.
    jobs_per_commit: Number((jobs / commits).toFixed(1)),
    messages_per_commit: Number((total / commits).toFixed(1)),
  }),
);
await server.close();
cleanUp();
