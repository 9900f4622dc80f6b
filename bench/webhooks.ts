/**
 * Webhook dispatch throughput: N events recorded beforehand (each with one delivery per
 * endpoint, as delivery records them), then one dispatcher POSTs them, signed, to HTTP
 * receivers on loopback in this process. Reports POSTs per second from the dispatcher's start
 * until the last outcome is committed, and CPU per POST (this process: dispatcher, database
 * and receivers together).
 *
 *   npx tsx bench/webhooks.ts [events=5000] [endpoints=1]
 *
 * MAILSVC_BENCH_PG_URL runs it on PostgreSQL.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { recordEvent } from '../src/events/record.ts';
import { createLogger } from '../src/log/logger.ts';
import { createServices } from '../src/services.ts';
import { WebhookDispatcher } from '../src/webhooks/dispatcher.ts';
import { configuredPoster } from '../src/webhooks/post.ts';
import { messageWith } from '../test/helpers/db.ts';
import { benchConfig, benchPgUrl as pg } from './setup.ts';

const total = Number(process.argv[2] ?? 5000);
const endpointCount = Number(process.argv[3] ?? 1);

let received = 0;
let onReceived: () => void = () => undefined;
const receiver = createServer((req, res) => {
  req.on('data', () => undefined);
  req.on('end', () => {
    received++;
    res.writeHead(204).end();
    onReceived();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const { config, cleanUp } = benchConfig({ webhooks: { allowPrivateAddresses: true } });
const services = await createServices(config, { log: createLogger('silent') });
const { db, clock } = services;
if (pg) await db.raw('TRUNCATE workspaces RESTART IDENTITY CASCADE');
const { workspaceId, messageId } = await messageWith(db, ['sending'], clock.now());
for (let i = 0; i < endpointCount; i++) await services.webhooks.create(workspaceId, { url: `${url}?n=${i}` });

const EVENTS = ['email.delivered', 'email.opened', 'email.clicked'] as const;
for (let i = 0; i < total; i += 500) {
  await db.transaction(async (tx) => {
    for (let j = i; j < Math.min(total, i + 500); j++) {
      await recordEvent(tx, {
        workspaceId,
        emailId: messageId,
        recipientId: null,
        event: EVENTS[j % EVENTS.length],
        recipient: `user${j}@example.org`,
        provider: { response: '250 2.0.0 Ok: queued as ABC123', reporting_mta: 'mx.example.org', status: '2.0.0', smtp_code: 250 },
        at: clock.now(),
      });
    }
  });
}
const expected = total * endpointCount;

const poster = configuredPoster(config, services.webhookHosts, clock);
const dispatcher = new WebhookDispatcher({ db, committer: services.committer, clock, log: services.log, poster, config: config.webhooks, leaseMs: 30_000 });
const cpu = process.cpuUsage();
const started = performance.now();
dispatcher.start();
await new Promise<void>((resolve) => {
  onReceived = () => received >= expected && resolve();
});
for (;;) {
  const [{ n }] = await db('webhook_deliveries').where({ status: 'pending' }).count({ n: '*' });
  if (Number(n) === 0) break;
  await new Promise((r) => setTimeout(r, 5));
}
const seconds = (performance.now() - started) / 1000;
const used = process.cpuUsage(cpu);
await dispatcher.stop();
poster.close();

const [{ n: logged }] = await db('webhook_attempts').count({ n: '*' });
console.log(
  JSON.stringify({
    database: pg ? 'pg' : 'sqlite',
    events: total,
    endpoints: endpointCount,
    posts: received,
    logged: Number(logged),
    seconds: Number(seconds.toFixed(2)),
    posts_per_second: Math.round(received / seconds),
    cpu_ms_per_post: Number(((used.user + used.system) / 1000 / received).toFixed(3)),
    commits: services.committer.stats(),
  }),
);
await services.close();
receiver.close();
cleanUp();
