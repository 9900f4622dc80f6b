import { WebhookDispatcher } from '../webhooks/dispatcher.ts';
import { configuredPoster } from '../webhooks/post.ts';
import { webhookQueue } from '../store/webhookQueue.ts';
import type { RoleStarter } from './types.ts';

/** How often the backlog gauge on /metrics is refreshed. */
const SAMPLE_MS = 5000;

/**
 * The webhooks role: one dispatcher per process; processes sharing a PostgreSQL database split
 * the endpoints between them through their leases.
 */
export const startWebhooksRole: RoleStarter = async (services) => {
  const { config, log, metrics, db } = services;
  const poster = configuredPoster(config, services.webhookHosts, services.clock);
  const dispatcher = new WebhookDispatcher({
    db,
    committer: services.committer,
    clock: services.clock,
    log,
    metrics,
    poster,
    config: config.webhooks,
    leaseMs: config.delivery.leaseSeconds * 1000,
  });
  dispatcher.start();
  const sampler = setInterval(() => {
    webhookQueue.backlog(db).then(
      (counts) => {
        for (const [status, n] of Object.entries(counts)) metrics.webhookBacklog.set({ endpoint_status: status }, n);
      },
      () => undefined,
    );
  }, SAMPLE_MS);
  sampler.unref();
  log.info({ phase: 'start', role: 'webhooks', worker: dispatcher.owner }, 'webhook dispatcher started');
  return {
    ports: {},
    close: async () => {
      clearInterval(sampler);
      await dispatcher.stop();
      poster.close();
    },
  };
};
