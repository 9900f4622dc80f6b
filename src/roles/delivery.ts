import { createRenderStep } from '../delivery/render.ts';
import { DeliveryWorker } from '../delivery/worker.ts';
import { sandboxDelivery } from '../sandbox/index.ts';
import { queueRepo } from '../store/queue.ts';
import type { Services } from '../services.ts';
import type { RoleStarter } from './types.ts';

/** How often the queue gauges on /metrics are refreshed. */
const SAMPLE_MS = 5000;
/** How often complaint rates are computed (gauges, the broadcast hold): a 7-day rate moves slowly. */
const REPUTATION_MS = 60_000;

/**
 * The complaint-rate check (the broadcast hold) and the gauges on /metrics from its figures:
 * one series per workspace, sending domain and stream with mail delivered in the last 7 days.
 */
export async function sampleReputation(services: Pick<Services, 'reputation' | 'metrics'>): Promise<void> {
  const { figures } = await services.reputation.check();
  services.metrics.complaintRate.reset();
  for (const f of figures) if (f.rate !== null) services.metrics.complaintRate.set({ workspace: f.workspaceName, domain: f.domain, stream: f.stream }, f.rate);
}

/**
 * The delivery role: one worker (claim loop, scheduler, lease renewal) per process; processes
 * sharing a PostgreSQL database split the queue between them through their leases.
 */
export const startDeliveryRole: RoleStarter = async (services) => {
  const { log, metrics, db } = services;
  const render = createRenderStep({ tokens: services.tokens, baseUrl: services.config.tracking.baseUrl });
  const sandbox = services.config.delivery.mode === 'sandbox';
  const worker = new DeliveryWorker(services, { render, ...(sandbox ? sandboxDelivery(services) : {}) });
  worker.start();
  const sampler = setInterval(() => {
    metrics.deliveryConnections.set(worker.stats().connections.open);
    queueRepo.unfinishedCounts(db).then(
      (counts) => {
        for (const [status, n] of Object.entries(counts)) metrics.deliveryQueue.set({ status }, n);
      },
      () => undefined,
    );
  }, SAMPLE_MS);
  sampler.unref();
  const reputation = setInterval(() => {
    sampleReputation(services).catch((err: unknown) => log.error({ phase: 'reputation', err }, 'complaint rate check failed'));
  }, REPUTATION_MS);
  reputation.unref();
  const { delivery } = services.config;
  log.info(
    { phase: 'start', role: 'delivery', mode: delivery.mode, worker: worker.owner, relay: delivery.relayHost, port: delivery.port, concurrency: delivery.concurrency },
    sandbox
      ? 'sandbox mode: nothing leaves this machine; every message is kept in the sandbox inbox (mailsvc inbox list)'
      : delivery.relayHost
        ? `delivery through the relay ${delivery.relayHost}`
        : `direct MX delivery on port ${delivery.port}`,
  );
  return {
    ports: {},
    close: async () => {
      clearInterval(sampler);
      clearInterval(reputation);
      await worker.stop();
    },
  };
};
