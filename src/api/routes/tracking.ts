import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { notFound } from '../../core/errors.ts';
import type { Services } from '../../services.ts';
import { TrackingHits, type Requester } from '../../tracking/hits.ts';
import { HitGate } from '../../tracking/gate.ts';
import { locationHeader, TRANSPARENT_GIF, unsubscribedPage, unsubscribePage } from '../../tracking/pages.ts';

const NO_CACHE = { 'Cache-Control': 'no-cache, no-store, must-revalidate, private', Pragma: 'no-cache', Expires: '0' };
/**
 * Every body these unauthenticated routes read, whatever its type: an RFC 8058 body is 26 bytes,
 * a form from the confirmation page no more.
 */
const TRACKING_BODY_LIMIT = 4096;
const ROUTE = { schema: { hide: true }, bodyLimit: TRACKING_BODY_LIMIT } as const;

const requester = (request: FastifyRequest): Requester => ({ ip: request.ip, userAgent: request.headers['user-agent']?.slice(0, 512) ?? null });
/** Wildcard routes: a click token carries its URL, longer than a path parameter may be. */
const tokenOf = (request: FastifyRequest) => (request.params as { '*': string })['*'];

/**
 * The public tracking routes, outside /api/v1 and without authentication: the token is the
 * credential. A forged or altered token is a 404, never a redirect.
 */
export const trackingRoutes =
  (services: Services, gate: HitGate = new HitGate()): FastifyPluginAsync =>
  async (app) => {
    const hits = new TrackingHits({ ...services, tokens: services.tokens, hostname: services.config.server.hostname, gate });

    // One-click POSTs come form-encoded (RFC 8058 §3.1) or as multipart; only the token matters,
    // so no body is parsed here, JSON included: each is read up to the limit and dropped.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => done(null, null));

    app.get('/t/o/*', ROUTE, async (request, reply) => {
      if (!(await hits.open(tokenOf(request), requester(request)))) throw notFound();
      return reply.headers({ ...NO_CACHE, 'Content-Type': 'image/gif' }).send(TRANSPARENT_GIF);
    });

    app.get('/t/c/*', ROUTE, async (request, reply) => {
      const url = await hits.click(tokenOf(request), requester(request));
      if (url === null) throw notFound();
      return reply
        .headers({ ...NO_CACHE, Location: locationHeader(url) })
        .code(302)
        .send();
    });

    app.get('/t/u/*', ROUTE, async (request, reply) => {
      if (!(await hits.unsubscribable(tokenOf(request), requester(request)))) throw notFound();
      return reply.headers({ ...NO_CACHE, 'Content-Type': 'text/html; charset=utf-8' }).send(unsubscribePage());
    });

    app.post('/t/u/*', ROUTE, async (request, reply) => {
      if (!(await hits.unsubscribe(tokenOf(request), requester(request)))) throw notFound();
      return reply.headers({ ...NO_CACHE, 'Content-Type': 'text/html; charset=utf-8' }).send(unsubscribedPage());
    });
  };
