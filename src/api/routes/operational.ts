import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../../services.ts';
import { ping } from '../../store/db.ts';

/** Unauthenticated routes for load balancers and scrapers. */
export const operationalRoutes =
  (services: Services): FastifyPluginAsync =>
  async (app) => {
    app.get('/healthz', { schema: { hide: true } }, async (_request, reply) => {
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
