import { createServer, connect, type Server, type Socket } from 'node:net';
import { onTestFinished } from 'vitest';
import type { Clock, RandomSource } from '../../src/core/ports.ts';
import { dkimTxtRecord } from '../../src/dkim/keys.ts';
import { DeliveryWorker, type DeliveryOptions } from '../../src/delivery/worker.ts';
import { domainsRepo } from '../../src/store/domains.ts';
import type { Role } from '../../src/roles/index.ts';
import { startTestDns, type TestDns } from '../helpers/dns-server.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { startSmtpSink, type SmtpSink, type SmtpSinkOptions } from '../helpers/smtp-sink.ts';
import type { StoreKind } from '../helpers/stores.ts';

/**
 * A delivery test world on loopback: a real DNS server, a real SMTP sink, a server over a
 * scratch database whose `dns.servers` and `delivery.port` point at them, and a workspace with
 * a verified sending domain whose DKIM key is published in that DNS.
 */
export interface DeliveryEnv {
  server: TestServer;
  dns: TestDns;
  sink: SmtpSink;
  /** `delivery.port`: every destination is reached on this port, at the address its MX resolves to. */
  port: number;
  ws: { id: number; apiKey: string };
  domain: string;
  /** Points `domain`'s MX at a host resolving to `ip` (default the sink's 127.0.0.1). */
  mx(domain: string, hosts?: { name: string; ip: string; priority?: number }[]): void;
  send(body: Record<string, unknown>): Promise<number>;
  worker(options?: DeliveryOptions): DeliveryWorker;
  detail(id: number): Promise<any>;
}

export interface EnvOptions {
  clock?: Clock;
  random?: RandomSource;
  delivery?: Record<string, unknown>;
  config?: Record<string, unknown>;
  sink?: SmtpSinkOptions;
  roles?: Role[];
}

export const FROM_DOMAIN = 'acme.test';

export async function deliveryEnv(kind: StoreKind, opts: EnvOptions = {}): Promise<DeliveryEnv> {
  const dns = await startTestDns();
  const sink = await startSmtpSink({ waitTimeoutMs: 20_000, ...opts.sink });
  onTestFinished(async () => {
    await sink.close();
    await dns.close();
  });
  const server = await startTestServer(kind, {
    clock: opts.clock,
    random: opts.random,
    roles: opts.roles ?? ['api'],
    config: {
      dns: { servers: [dns.address], timeout: 1 },
      delivery: { port: sink.port, leaseSeconds: 30, ...opts.delivery },
      inbound: { returnPathDomain: 'bounces.mail.mailsvc.test' },
      ...opts.config,
    },
  });
  const name = `ws-${Math.random().toString(36).slice(2, 8)}`;
  const ws = await server.workspace(name);
  // Tests send hundreds of messages in seconds; the plan limits are not what they are about.
  await server.services.tenancy.setLimits(name, { perMinute: 100_000, perHour: 1_000_000 });
  await server.verifiedDomain(ws.id, FROM_DOMAIN);
  const row = (await domainsRepo.byName(server.services.db, FROM_DOMAIN))!;
  dns.set(`${row.selector}._domainkey.${FROM_DOMAIN}`, 'TXT', dkimTxtRecord(row.dkim_public_key));

  const env: DeliveryEnv = {
    server,
    dns,
    sink,
    port: sink.port,
    ws,
    domain: FROM_DOMAIN,
    mx(domain, hosts = [{ name: `mx.${domain}`, ip: '127.0.0.1' }]) {
      dns.set(
        domain,
        'MX',
        hosts.map((h, i) => ({ exchange: h.name, priority: h.priority ?? 10 * (i + 1) })),
      );
      for (const h of hosts) dns.set(h.name, 'A', h.ip);
    },
    async send(body) {
      const res = await server.api('POST', '/emails', { key: ws.apiKey, body: { from: `Acme <news@${FROM_DOMAIN}>`, subject: 'Hello', text: 'Hi there', ...body } });
      if (res.status !== 201) throw new Error(`send: ${res.status} ${res.text}`);
      return res.body.id;
    },
    worker(options = {}) {
      const worker = new DeliveryWorker(server.services, { stopGraceMs: 2000, ...options });
      onTestFinished(() => worker.stop());
      return worker;
    },
    async detail(id) {
      const res = await server.api('GET', `/emails/${id}`, { key: ws.apiKey });
      return res.body;
    },
  };
  return env;
}

/**
 * A second "host" on the same port: `delivery.port` is one number for every destination, so a
 * second destination listens on another loopback address (127.0.0.2, ...) and forwards there.
 */
export async function loopbackAlias(ip: string, port: number, target: { host: string; port: number }): Promise<void> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, ip, () => resolve());
  });
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  );
}
