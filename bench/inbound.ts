/**
 * Mail received for routes (SPEC §14): Postfix's `smtp-source` sends N messages of 5 KB over S
 * parallel sessions to the inbound MX, for a route whose URL is an HTTP receiver on loopback in
 * this process; the webhook dispatcher POSTs each as `email.received`. Reports messages received
 * per second (until smtp-source has its last 250: each one parsed, authenticated and committed)
 * and POSTed per second (until the receiver has the last one and its outcome is committed). The
 * same smtp-source run into Postfix's smtp-sink is the reference: what the client side and
 * loopback manage without mailsvc in between.
 *
 *   npm run bench -- inbound [messages=2000] [sessions=10] [bytes=5120]
 *
 * The listener runs with the per-address message rate and connection cap lifted (every message
 * comes from 127.0.0.1). Needs postfix (smtp-source, smtp-sink; installed with apt-get when
 * missing). MAILSVC_BENCH_PG_URL runs it on PostgreSQL.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mailauthResolver } from '../src/inbound/auth.ts';
import { startInboundListener } from '../src/inbound/server.ts';
import { ReturnPathDomains } from '../src/domains/return-path.ts';
import { createLogger } from '../src/log/logger.ts';
import { ReceivingRoutes } from '../src/routes/receiving.ts';
import { createServices } from '../src/services.ts';
import { WebhookDispatcher } from '../src/webhooks/dispatcher.ts';
import { configuredPoster } from '../src/webhooks/post.ts';
import { startTestDns } from '../test/helpers/dns-server.ts';
import { ensurePackages, smtpSink, smtpSource } from './lib/smtp.ts';
import { benchConfig, benchPgUrl as pg, benchSender } from './setup.ts';

const [total, sessions, bytes] = [Number(process.argv[2] ?? 2000), Number(process.argv[3] ?? 10), Number(process.argv[4] ?? 5120)];
ensurePackages([{ probe: '/usr/sbin/smtp-source', packages: ['postfix'] }]);

// The reference: smtp-source straight into smtp-sink, in the same run.
const sink = await smtpSink();
let started = performance.now();
await smtpSource(sink.port, { total, sessions, bytes, from: 'client@sender.test', to: 'in@dest.test' });
const referenceSeconds = (performance.now() - started) / 1000;
await sink.stop();

let posted = 0;
let onPosted: () => void = () => undefined;
const receiver = createServer((req, res) => {
  req.on('data', () => undefined);
  req.on('end', () => {
    posted++;
    res.writeHead(204).end();
    onPosted();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

// An empty zone: SPF, DKIM and DMARC lookups are answered (NXDOMAIN) on loopback, not by the world.
const dns = await startTestDns();
const { config, cleanUp } = benchConfig({ webhooks: { allowPrivateAddresses: true }, dns: { servers: [dns.address], timeout: 2 } });
const services = await createServices(config, { log: createLogger('silent') });
const { db, clock, log } = services;
if (pg) await db.raw('TRUNCATE workspaces RESTART IDENTITY CASCADE');
const { workspaceId, domain } = await benchSender(services);
await services.domains.update(null, domain, { inbound: true });
await services.routes.create(workspaceId, { match: `*@${domain}`, url });

const listener = await startInboundListener(
  {
    db,
    clock,
    log,
    metrics: services.metrics,
    verp: services.tokens.verp,
    unsubscribe: services.tokens.unsubscribe,
    hostname: config.server.hostname,
    returnPathDomains: new ReturnPathDomains(db, clock, config.inbound.returnPathDomain),
    receiving: new ReceivingRoutes(db, clock),
    routeMail: {
      committer: services.committer,
      resolver: mailauthResolver(services.dns),
      inlineAttachmentBytes: config.inbound.inlineAttachmentBytes,
      baseUrl: config.tracking.baseUrl,
    },
  },
  {
    host: '127.0.0.1',
    port: 0,
    maxSize: config.inbound.maxSize,
    tls: null,
    maxConnectionsPerIp: 1000,
    messagesPerMinutePerIp: 1_000_000_000,
    parse: { workers: config.inbound.parseWorkers, budgetMs: config.inbound.parseBudgetMs, maxQueued: 1000 },
  },
);
const poster = configuredPoster(config, services.webhookHosts, clock);
const dispatcher = new WebhookDispatcher({ db, committer: services.committer, clock, log, poster, config: config.webhooks, leaseMs: 30_000 });
dispatcher.start();

const cpu = process.cpuUsage();
started = performance.now();
const allPosted = new Promise<void>((resolve) => {
  onPosted = () => posted >= total && resolve();
});
await smtpSource(listener.port, { total, sessions, bytes, from: 'client@sender.test', to: `in@${domain}` });
const receivedSeconds = (performance.now() - started) / 1000;
await allPosted;
for (;;) {
  const [{ n }] = await db('webhook_deliveries').where({ status: 'pending' }).count({ n: '*' });
  if (Number(n) === 0) break;
  await new Promise((r) => setTimeout(r, 5));
}
const postedSeconds = (performance.now() - started) / 1000;
const used = process.cpuUsage(cpu);
const [{ n: stored }] = await db('inbound_messages').count({ n: '*' });

console.log(
  JSON.stringify({
    database: pg ? 'pg' : 'sqlite',
    messages: total,
    sessions,
    bytes,
    reference_smtp_sink_per_s: Math.round(total / referenceSeconds),
    received: Number(stored),
    received_in_s: Number(receivedSeconds.toFixed(2)),
    received_per_s: Math.round(total / receivedSeconds),
    posted,
    posted_in_s: Number(postedSeconds.toFixed(2)),
    posted_per_s: Math.round(total / postedSeconds),
    cpu_ms_per_message: Number(((used.user + used.system) / 1000 / total).toFixed(2)),
  }),
);

await dispatcher.stop();
poster.close();
await listener.close();
await services.close();
await dns.close();
receiver.close();
cleanUp();
