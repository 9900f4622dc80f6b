import { onTestFinished } from 'vitest';
import type { Clock } from '../../src/core/ports.ts';
import type { Role } from '../../src/roles/index.ts';
import { startTestDns, type TestDns } from '../helpers/dns-server.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts';
import type { StoreKind } from '../helpers/stores.ts';

export const DOMAIN = 'acme.test';

/**
 * A server in sandbox mode whose `dns.servers` and `delivery.port` point at a real DNS server
 * and a real SMTP sink on loopback, so a test can show that neither is ever asked; with a
 * workspace whose `acme.test` domain was verified through the API (no DNS record anywhere).
 */
export interface SandboxEnv {
  server: TestServer;
  dns: TestDns;
  sink: SmtpSink;
  ws: { id: number; apiKey: string };
  send(body: Record<string, unknown>, key?: string): Promise<number>;
  detail(id: number): Promise<any>;
  inbox(query?: string, key?: string): Promise<any[]>;
}

export async function sandboxEnv(kind: StoreKind, opts: { clock?: Clock; roles?: Role[]; mode?: 'sandbox' | 'live' } = {}): Promise<SandboxEnv> {
  const dns = await startTestDns();
  const sink = await startSmtpSink({ waitTimeoutMs: 20_000 });
  onTestFinished(async () => {
    await sink.close();
    await dns.close();
  });
  const server = await startTestServer(kind, {
    clock: opts.clock,
    // Retry jitter of exactly 0: the schedule's own times.
    random: () => 0.5,
    roles: opts.roles ?? ['api'],
    config: {
      dns: { servers: [dns.address], timeout: 1 },
      delivery: { mode: opts.mode ?? 'sandbox', port: sink.port },
      inbound: { returnPathDomain: 'bounces.mail.mailsvc.test' },
    },
  });
  const name = `ws-${Math.random().toString(36).slice(2, 8)}`;
  const ws = await server.workspace(name);
  await server.services.tenancy.setLimits(name, { perMinute: 100_000, perHour: 1_000_000 });
  const added = await server.api('POST', '/domains', { key: ws.apiKey, body: { name: DOMAIN } });
  if (added.status !== 201) throw new Error(`domain: ${added.status} ${added.text}`);
  await server.api('POST', `/domains/${added.body.id}/verify`, { key: ws.apiKey });
  return {
    server,
    dns,
    sink,
    ws,
    async send(body, key = ws.apiKey) {
      const res = await server.api('POST', '/emails', { key, body: { from: `Acme <news@${DOMAIN}>`, subject: 'Hello', text: 'Hi there', ...body } });
      if (res.status !== 201) throw new Error(`send: ${res.status} ${res.text}`);
      return res.body.id;
    },
    async detail(id) {
      return (await server.api('GET', `/emails/${id}`, { key: ws.apiKey })).body;
    },
    async inbox(query = '', key = ws.apiKey) {
      const res = await server.api('GET', `/sandbox/messages${query}`, { key });
      if (res.status !== 200) throw new Error(`inbox: ${res.status} ${res.text}`);
      return res.body.data;
    },
  };
}
