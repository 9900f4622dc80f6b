import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../services.ts';
import { installAuth } from './auth.ts';
import { clientError, frameworkError, installErrorHandling } from './errors.ts';
import { installCanonicalIds } from './ids.ts';
import { installJsonParser } from './json.ts';
import { installLingeringClose } from './linger.ts';
import { OneLinePerRequest, requestLogger } from './request-log.ts';
import { buildSerializer, buildValidator } from './schema-compilers.ts';
import { ErrorBody } from './schemas/common.ts';
import { domainRoutes } from './routes/v1/domains.ts';
import { apiKeyRoutes } from './routes/v1/apiKeys.ts';
import { emailRoutes } from './routes/v1/emails.ts';
import { suppressionRoutes } from './routes/v1/suppressions.ts';
import { usageRoutes } from './routes/v1/usage.ts';
import { statsRoutes } from './routes/v1/stats.ts';
import { queueRoutes } from './routes/v1/queue.ts';
import { sandboxRoutes } from './routes/v1/sandbox.ts';
import { webhookRoutes } from './routes/v1/webhooks.ts';
import { routeRoutes } from './routes/v1/routes.ts';
import { inboundRoutes } from './routes/v1/inbound.ts';
import { templateRoutes } from './routes/v1/templates.ts';
import { sendTestEvent } from '../webhooks/test-event.ts';
import { operationalRoutes } from './routes/operational.ts';
import { trackingRoutes } from './routes/tracking.ts';
import { consoleRoutes } from './routes/console.ts';

export interface AppOptions {
  /** A pino logger for request logs; none by default (tests). */
  logger?: FastifyBaseLogger;
  /** The roles of the process not running yet, named by a 503 from `/healthz`; none by default. */
  readiness?: { notReady(): readonly string[] };
}

/** The Fastify app: the only place that knows about HTTP. */
export async function buildApp(services: Services, options: AppOptions = {}): Promise<FastifyInstance> {
  const { config, metrics } = services;
  const app = Fastify({
    ...(options.logger ? { loggerInstance: requestLogger(options.logger), logController: new OneLinePerRequest() } : { logger: false }),
    bodyLimit: config.http.bodyLimit,
    // X-Forwarded-* are believed only from the configured proxies: anyone else could invent the
    // client address the tracking limits and events use, or the host the console's origin check compares.
    trustProxy: config.http.trustProxy.length > 0 ? [...config.http.trustProxy] : false,
    return503OnClosing: true,
    // Suppression entries carry an address in the path (up to 320 characters, more when
    // percent-encoded); Fastify's default of 100 would refuse long but valid ones.
    routerOptions: { maxParamLength: 1000 },
    frameworkErrors: (err, _request, reply) => frameworkError(err, reply),
    clientErrorHandler: clientError,
    schemaController: { compilersFactory: { buildValidator, buildSerializer } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  installErrorHandling(app, config.http.bodyLimit);
  // After an early 413, up to twice the limit more is read (an 11 MB body at 10 MB ends cleanly).
  installLingeringClose(
    app,
    { bytes: 2 * config.http.bodyLimit, totalMs: 30_000, idleMs: 5_000 },
    { discarded: (n) => metrics.httpDiscarded.inc(n), lingering: (delta) => metrics.httpLingering.inc(delta) },
  );
  installCanonicalIds(app);
  // Only JSON bodies: anything else is a 415, not a string handed to the JSON schema.
  app.removeContentTypeParser('text/plain');
  installJsonParser(app);
  app.addSchema(ErrorBody);

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpRequests.inc({ method: request.method, route, status: String(reply.statusCode) });
    metrics.httpDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'mailsvc API',
        version: '1.0.0',
        description:
          'Send email; manage sending domains, API keys, suppression lists, templates and webhook endpoints; read message status and usage; hold, release and cancel queued mail.',
      },
      servers: [{ url: '/' }],
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'an API key, mk_...' } } },
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });

  await app.register(operationalRoutes(services, options.readiness));
  await app.register(trackingRoutes(services));
  await app.register(consoleRoutes(services));

  await app.register(
    async (v1) => {
      v1.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
      await v1.register(async (authed) => {
        installAuth(authed, {
          authenticate: (token) => services.tenancy.authenticate(token),
          rateLimit: (principal) => services.rateLimit(principal),
          console: { sessions: services.consoleSessions, principalOfKey: (id) => services.tenancy.principalOfKey(id) },
        });
        await authed.register(domainRoutes(services.domains));
        await authed.register(apiKeyRoutes(services.tenancy));
        await authed.register(emailRoutes(services));
        await authed.register(suppressionRoutes(services.suppressions));
        await authed.register(usageRoutes(services.usage));
        await authed.register(statsRoutes(services.stats, services.queueControl, services.reputation));
        await authed.register(queueRoutes(services.queueControl));
        await authed.register(webhookRoutes(services.webhooks, (endpoint) => sendTestEvent(services, endpoint)));
        await authed.register(routeRoutes(services.routes));
        await authed.register(inboundRoutes(services.inboundMessages));
        await authed.register(templateRoutes(services.templates));
        await authed.register(sandboxRoutes({ inbox: services.sandbox, enabled: config.delivery.mode === 'sandbox' }));
      });
    },
    { prefix: '/api/v1' },
  );

  return app;
}
