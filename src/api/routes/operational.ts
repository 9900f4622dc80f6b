import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../../services.ts';
import { ping } from '../../store/db.ts';

/**
 * Unauthenticated routes for load balancers and scrapers. `/healthz` is readiness (SPEC §1): 200
 * only once every role of the process runs, so whoever waits for it may use any listener at once.
 */
export const operationalRoutes =
  (services: Services, readiness?: { notReady(): readonly string[] }): FastifyPluginAsync =>
  async (app) => {
    app.get('/healthz', { schema: { hide: true } }, async (_request, reply) => {
      const waiting = readiness?.notReady() ?? [];
      if (waiting.length > 0) return reply.code(503).send({ error: `Not ready: ${waiting.join(', ')}` });
      try {
        await ping(services.db);
        return { status: 'ok' };
      } catch {
        return reply.code(503).send({ error: 'Database unavailable' });
      }
    });

    app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
      reply.header('Content-Type', services.metrics.registry.contentType);
      return services.metrics.registry.metrics();
    });
  };
