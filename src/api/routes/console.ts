import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { forbidden, ServiceError, unauthorized } from '../../core/errors.ts';
import { ConsoleAssets, type AssetName } from '../../console/assets.ts';
import { CONSOLE_HEADERS, cookieValue, fromOwnOrigin, sessionCookieHeader } from '../../console/policy.ts';
import { SESSION_COOKIE, SESSION_SECONDS } from '../../console/session.ts';
import type { Services } from '../../services.ts';
import { scopeOf } from '../../tenancy/principal.ts';
import { CSRF_HEADER } from '../auth.ts';

const Session = Type.Object({
  key_id: Type.Integer(),
  scope: Type.String({ description: '`workspace` or `domain:<name>`' }),
  csrf_token: Type.String({ description: `send it back in ${CSRF_HEADER} on every state-changing request` }),
  expires_at: Type.String(),
  sandbox: Type.Boolean({ description: 'whether the server runs in sandbox mode (the inbox screen)' }),
});

/** A sign-in body holds one key (200 characters at most); nothing else is read without a key. */
const SESSION_BODY_LIMIT = 4096;

const notBuilt = () => new ServiceError('UNAVAILABLE', 'The console is not built; run npm run build');

/**
 * The web console: its page and assets at `/`, and its session (sign in with an API key, read,
 * sign out). Every screen then reads and writes through /api/v1 with the session cookie.
 */
export const consoleRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    const assets = new ConsoleAssets();
    const { consoleSessions: sessions, tenancy, config } = services;

    const serve = (name: AssetName) => async (_request: FastifyRequest, reply: FastifyReply) => {
      const asset = await assets.get(name);
      if (!asset) throw notBuilt();
      return reply.headers(CONSOLE_HEADERS).header('Cache-Control', 'no-cache').type(asset.type).send(asset.body);
    };
    app.get('/', { schema: { hide: true } }, serve('index.html'));
    app.get('/assets/console.js', { schema: { hide: true } }, serve('console.js'));
    app.get('/assets/console.css', { schema: { hide: true } }, serve('console.css'));

    const ownOrigin = (request: FastifyRequest) => {
      if (!fromOwnOrigin({ origin: request.headers.origin, referer: request.headers.referer }, { protocol: request.protocol, host: request.host })) {
        throw forbidden("Cross-origin request refused: a console request must come from this server's own pages");
      }
    };
    const view = async (cookie: string, keyId: number, expiresAt: number) => {
      const principal = await tenancy.principalOfKey(keyId);
      return {
        key_id: principal.keyId,
        scope: scopeOf(principal.domain),
        csrf_token: sessions.csrfToken(cookie),
        expires_at: new Date(expiresAt * 1000).toISOString(),
        sandbox: config.delivery.mode === 'sandbox',
      };
    };
    const setCookie = (request: FastifyRequest, reply: FastifyReply, value: string, maxAge: number) =>
      reply.header('Set-Cookie', sessionCookieHeader(SESSION_COOKIE, value, { maxAge, secure: request.protocol === 'https' }));

    app.post(
      '/console/session',
      {
        bodyLimit: SESSION_BODY_LIMIT,
        schema: {
          hide: true,
          body: Type.Object({ api_key: Type.String({ maxLength: 200 }) }, { additionalProperties: false }),
          response: { 200: Session },
        },
      },
      async (request, reply) => {
        // Login CSRF: another site must not sign a visitor in with the other site's key.
        ownOrigin(request);
        const principal = await tenancy.authenticate(request.body.api_key);
        const { cookie, claims } = sessions.issue(principal.keyId);
        setCookie(request, reply, cookie, SESSION_SECONDS);
        reply.header('Cache-Control', 'no-store');
        return view(cookie, claims.keyId, claims.expiresAt);
      },
    );

    app.get('/console/session', { schema: { hide: true, response: { 200: Session } } }, async (request, reply) => {
      const cookie = cookieValue(request.headers.cookie, SESSION_COOKIE);
      const claims = sessions.verify(cookie);
      if (!claims || !cookie) throw unauthorized();
      reply.header('Cache-Control', 'no-store');
      return view(cookie, claims.keyId, claims.expiresAt);
    });

    app.delete('/console/session', { schema: { hide: true }, bodyLimit: SESSION_BODY_LIMIT }, async (request, reply) => {
      ownOrigin(request);
      const cookie = cookieValue(request.headers.cookie, SESSION_COOKIE);
      if (sessions.verify(cookie) && !sessions.csrfMatches(cookie!, request.headers[CSRF_HEADER] as string | undefined)) {
        throw forbidden('Missing or invalid CSRF token');
      }
      setCookie(request, reply, '', 0);
      return reply.code(204).send();
    });
  };
