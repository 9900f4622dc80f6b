/**
 * Delivery throughput: messages queued beforehand, then one delivery worker sends them to SMTP
 * sinks on loopback through a real DNS server (MX lookup, VERP, DKIM signing per recipient,
 * one SMTP transaction each, outcome and event committed per recipient). Reports messages per
 * second from the worker's start until the last outcome is committed.
 *
 *   npx tsx bench/delivery.ts [messages=2000] [domains=1] [concurrency=50] [html_kb=0] [tracking=off|on]
 *
 * Each destination domain has its own MX host on its own loopback address (127.0.0.1, .2, ...)
 * with its own sink, all on one port (`delivery.port`). MAILSVC_BENCH_PG_URL runs it on PostgreSQL.
 * `html_kb` > 0 sends an HTML body of about that size with a link every ~100 bytes of text;
 * `tracking=on` turns the sending domain's open and click tracking on (the worker always runs
 * the render step the delivery role runs).
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { createRenderStep } from '../src/delivery/render.ts';
import { DeliveryWorker } from '../src/delivery/worker.ts';
import { createLogger } from '../src/log/logger.ts';
import { validateSend } from '../src/messages/validate.ts';
import { createServices } from '../src/services.ts';
import { startTestDns } from '../test/helpers/dns-server.ts';
import { benchConfig, benchPgUrl as pg, benchSender } from './setup.ts';

const total = Number(process.argv[2] ?? 2000);
const domainCount = Number(process.argv[3] ?? 1);
const concurrency = Number(process.argv[4] ?? 50);
const htmlKb = Number(process.argv[5] ?? 0);
const tracking = process.argv[6] === 'on';

let received = 0;
let connections = 0;
let onReceived: () => void = () => undefined;

function sink(): SMTPServer {
  return new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    onConnect(_session, callback) {
      connections++;
      callback();
    },
    onData(stream, _session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        received++;
        onReceived();
        callback();
      });
    },
  });
}

async function listen(server: SMTPServer, host: string, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return (server.server.address() as AddressInfo).port;
}

const dns = await startTestDns();
const sinks = Array.from({ length: domainCount }, sink);
const port = await listen(sinks[0]!, '127.0.0.1', 0);
for (let i = 1; i < domainCount; i++) await listen(sinks[i]!, `127.0.0.${i + 1}`, port);
const destinations = sinks.map((_, i) => `dest${i}.test`);
destinations.forEach((domain, i) => {
  dns.set(domain, 'MX', { exchange: `mx.${domain}`, priority: 10 });
  dns.set(`mx.${domain}`, 'A', `127.0.0.${i + 1}`);
});

const { config, cleanUp } = benchConfig({ dns: { servers: [dns.address], timeout: 2 }, delivery: { port, concurrency } });
const services = await createServices(config, { log: createLogger('silent') });
const { domain: from, workspaceId } = await benchSender(services);
if (tracking) await services.domains.update(null, from, { open: true, click: true });
const paragraph = (n: number, i: number) =>
  `<p>Item ${i} of issue ${n}: ${'words of the newsletter '.repeat(3)}<a href="https://shop.example/p/${i}?n=${n}&amp;utm=mail">read more</a></p>\n`;
const html = (n: number) =>
  htmlKb > 0 ? `<html><body>${Array.from({ length: Math.ceil((htmlKb * 1024) / 130) }, (_, i) => paragraph(n, i)).join('')}</body></html>` : `<p>Hello ${n}</p>`;

const principal = { keyId: 0, workspaceId, domain: null, limits: { perMinute: 1e9, perHour: 1e9 } };
const queued = Date.now();
for (let i = 0; i < total; i += 100) {
  await Promise.all(
    Array.from({ length: Math.min(100, total - i) }, (_, j) => {
      const n = i + j;
      const to = `user${n}@${destinations[n % domainCount]}`;
      const message = validateSend({ from: `News <news@${from}>`, to, subject: `Hello ${n}`, html: html(n), text: `Hello ${n}` }, Date.now());
      return services.accept.accept(principal, message);
    }),
  );
}
const queueSeconds = (Date.now() - queued) / 1000;

const worker = new DeliveryWorker(services, { render: createRenderStep({ tokens: services.tokens, baseUrl: config.tracking.baseUrl }) });
const allReceived = new Promise<void>((resolve) => {
  onReceived = () => {
    if (received === total) resolve();
  };
});
// Every statement the worker sends, BEGIN/SAVEPOINT/COMMIT included: round trips on PostgreSQL.
let statements = 0;
services.db.on('query', () => statements++);
const started = Date.now();
const cpuBefore = process.cpuUsage();
worker.start();
await allReceived;
await worker.stop();
const workerStatements = statements;
const seconds = (Date.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);

const statuses = (await services.db('recipients').groupBy('status').select('status').count({ n: '*' })) as unknown as { status: string; n: number | string }[];
console.log(
  JSON.stringify({
    database: pg ? 'pg' : 'sqlite',
    messages: total,
    domains: domainCount,
    concurrency,
    html_kb: htmlKb,
    tracking,
    max_connections_per_host: config.delivery.maxConnectionsPerHost,
    connections,
    queued_in_s: Number(queueSeconds.toFixed(2)),
    delivered_in_s: Number(seconds.toFixed(2)),
    messages_per_s: Math.round(total / seconds),
    statements_per_message: Number((workerStatements / total).toFixed(2)),
    cpu_ms_per_message: Number(((cpu.user + cpu.system) / 1000 / total).toFixed(3)),
    statuses: Object.fromEntries(statuses.map((s) => [s.status, Number(s.n)])),
  }),
);

await services.close();
await Promise.all(sinks.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
await dns.close();
cleanUp();
