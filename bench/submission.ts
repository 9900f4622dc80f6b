/**
 * SMTP submission throughput with Postfix's own load tools: `smtp-source` submits N messages of
 * 5 KB over S parallel sessions to the submission listener, and the delivery worker sends them on
 * to Postfix's `smtp-sink` as the MX (through a real DNS server on loopback). The same
 * smtp-source run straight into a second smtp-sink is the reference: what the client side and
 * loopback manage without mailsvc in between.
 *
 *   npx tsx bench/submission.ts [messages=2000] [sessions=20] [bytes=5120] [-- extra smtp-source flags, e.g. -d]
 *
 * smtp-source cannot authenticate, so each of its connections goes through a small relay
 * (bench/lib/auth-relay.c, a process of its own, compiled on first use) that sends
 * `AUTH PLAIN <key>` after the client's HELO/EHLO and then passes bytes through (AUTH without TLS
 * is allowed on loopback). Needs postfix installed (smtp-source, smtp-sink) and a C compiler.
 * MAILSVC_BENCH_PG_URL runs it on PostgreSQL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { createLogger } from '../src/log/logger.ts';
import { startServer } from '../src/main.ts';
import { startTestDns } from '../test/helpers/dns-server.ts';
import { authRelay, freePort, SINK, SOURCE } from './lib/smtp.ts';
import { benchConfig, benchPgUrl as pg, benchSender } from './setup.ts';

const args = process.argv.slice(2);
const extra = args.includes('--') ? args.slice(args.indexOf('--') + 1) : [];
const [total, sessions, bytes] = [Number(args[0] ?? 2000), Number(args[1] ?? 20), Number(args[2] ?? 5120)];

/** Postfix's smtp-sink on 127.0.0.1:port; with `exitAfter`, it exits once that many messages arrived. */
async function smtpSink(port: number, exitAfter?: number): Promise<ChildProcess> {
  const root = process.getuid?.() === 0 ? ['-u', 'nobody'] : [];
  const child = spawn(SINK, [...root, ...(exitAfter ? ['-M', String(exitAfter)] : []), '-m', '512', `127.0.0.1:${port}`, '1024'], { stdio: 'ignore' });
  // Ready once it accepts a connection.
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => (s.destroy(), resolve(true))).on('error', () => resolve(false));
    });
    if (ok) return child;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Runs smtp-source against port; resolves with the seconds it took. */
async function source(port: number, from: string, to: string): Promise<number> {
  const started = process.hrtime.bigint();
  const child = spawn(SOURCE, ['-s', String(sessions), '-m', String(total), '-l', String(bytes), '-f', from, '-t', to, ...extra, `127.0.0.1:${port}`], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`smtp-source exited ${code}`);
  return Number(process.hrtime.bigint() - started) / 1e9;
}

const dns = await startTestDns();
const [mxPort, referencePort] = [await freePort(), await freePort()];
dns.set('dest.test', 'MX', { exchange: 'mx.dest.test', priority: 10 });
dns.set('mx.dest.test', 'A', '127.0.0.1');

// The reference: smtp-source straight into smtp-sink, in the same run.
const reference = await smtpSink(referencePort);
const referenceSeconds = await source(referencePort, 'news@bench.test', 'user@dest.test');
reference.kill();

const { config, cleanUp } = benchConfig({
  dns: { servers: [dns.address], timeout: 2 },
  submission: { host: '127.0.0.1', port: 0, tlsPort: 0, maxConnectionsPerAddress: 1000 },
  delivery: { port: mxPort },
});
const server = await startServer(config, { roles: ['submission', 'delivery'], overrides: { log: createLogger('silent') } });
const { services } = server;
const { apiKey, domain } = await benchSender(services);

const mx = await smtpSink(mxPort, total);
const relay = await authRelay(server.roles.submission!.ports.submission, apiKey);
const started = process.hrtime.bigint();
const acceptedSeconds = await source(relay.port, `news@${domain}`, 'user@dest.test');
await once(mx, 'exit');
const deliveredSeconds = Number(process.hrtime.bigint() - started) / 1e9;

const accepted = Number((await services.db('messages').count({ n: '*' }))[0]!.n);
console.log(
  JSON.stringify({
    database: pg ? 'pg' : 'sqlite',
    messages: total,
    sessions,
    bytes,
    smtp_source_flags: extra.join(' '),
    reference_smtp_sink_per_s: Math.round(total / referenceSeconds),
    accepted,
    accepted_in_s: Number(acceptedSeconds.toFixed(2)),
    accepted_per_s: Math.round(total / acceptedSeconds),
    delivered_in_s: Number(deliveredSeconds.toFixed(2)),
    delivered_per_s: Math.round(total / deliveredSeconds),
  }),
);

await relay.close();
await server.close();
await dns.close();
cleanUp();
