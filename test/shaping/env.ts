import { onTestFinished } from 'vitest';
import type { Clock } from '../../src/core/ports.ts';
import { DeliveryWorker, type DeliveryOptions } from '../../src/delivery/worker.ts';
import { startTestDns, type TestDns } from '../helpers/dns-server.ts';
import { startProviderFarm, type FarmProviderSpec, type ProviderFarm } from '../helpers/provider-farm.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import type { StoreKind } from '../helpers/stores.ts';

export const FROM_DOMAIN = 'acme.test';

/** A shaping test world: the provider farm behind a test DNS, a server delivering to it, one sending workspace. */
export interface ShapingEnv {
  server: TestServer;
  dns: TestDns;
  farm: ProviderFarm;
  ws: { id: number; apiKey: string };
  /** Accepts one message to each address, one POST each; returns the ids in order. */
  send(to: string[]): Promise<number[]>;
  worker(options?: DeliveryOptions): DeliveryWorker;
  statuses(ids: number[]): Promise<{ status: string; attempts: number }[]>;
}

export async function shapingEnv(
  kind: StoreKind,
  providers: FarmProviderSpec[],
  shaping: Record<string, unknown>,
  config: Record<string, unknown> = {},
  clock?: Clock,
): Promise<ShapingEnv> {
  const dns = await startTestDns();
  const farm = await startProviderFarm({ dns, providers, waitTimeoutMs: 60_000 });
  onTestFinished(async () => {
    await farm.close();
    await dns.close();
  });
  const { delivery, ...rest } = config as { delivery?: Record<string, unknown> };
  const server = await startTestServer(kind, {
    clock,
    config: {
      dns: { servers: [dns.address], timeout: 1 },
      // Signing off the event loop: pacing is checked at the receiver, to the millisecond.
      delivery: { leaseSeconds: 30, signingThreads: 1, ...delivery, port: farm.port },
      inbound: { returnPathDomain: 'bounces.mail.mailsvc.test' },
      shaping,
      ...rest,
    },
  });
  const ws = await server.sender(`ws-${Math.random().toString(36).slice(2, 8)}`, FROM_DOMAIN);
  return {
    server,
    dns,
    farm,
    ws,
    async send(to) {
      const ids: number[] = [];
      for (const address of to) {
        const res = await server.api('POST', '/emails', {
          key: ws.apiKey,
          body: { from: `Acme <news@${FROM_DOMAIN}>`, to: address, subject: 'Hello', text: 'Hi there' },
        });
        if (res.status !== 201) throw new Error(`send: ${res.status} ${res.text}`);
        ids.push(res.body.id);
      }
      return ids;
    },
    worker(options = {}) {
      const worker = new DeliveryWorker(server.services, { stopGraceMs: 2000, pollMs: 50, ...options });
      onTestFinished(() => worker.stop());
      return worker;
    },
    async statuses(ids) {
      return Promise.all(
        ids.map(async (id) => {
          const res = await server.api('GET', `/emails/${id}`, { key: ws.apiKey });
          return { status: res.body.status, attempts: res.body.recipients[0].attempts };
        }),
      );
    },
  };
}

/** `n` addresses spread over `domains` in turn. */
export function addresses(n: number, domains: string[], prefix = 'user'): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}${i}@${domains[i % domains.length]}`);
}
