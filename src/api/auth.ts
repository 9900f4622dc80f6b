import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { forbidden, ServiceError } from '../core/errors.ts';
import { SESSION_COOKIE, type ConsoleSessions } from '../console/session.ts';
import { changesState, cookieValue, fromOwnOrigin } from '../console/policy.ts';
import type { Principal } from '../tenancy/principal.ts';
import type { RateDecision } from '../ratelimit/sliding.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
    /** What the rate limit decided for this request, which counted it. */
    rate: RateDecision;
  }
}

export interface AuthDeps {
  authenticate(token: string | undefined): Promise<Principal>;
  rateLimit(principal: Principal): Promise<RateDecision>;
  /** The web console's cookie sessions: an alternative to the bearer key for a browser. */
  console?: { sessions: ConsoleSessions; principalOfKey(keyId: number): Promise<Principal> };
}

export const CSRF_HEADER = 'x-csrf-token';

/**
 * The principal of a console session cookie, for a request carrying no Authorization header.
 * A cookie is sent by the browser on its own, so a state change also needs the CSRF token only
 * the console's page can read and must come from this server's own origin.
 */
async function sessionPrincipal(request: FastifyRequest, deps: NonNullable<AuthDeps['console']>): Promise<Principal | undefined> {
  const cookie = cookieValue(request.headers.cookie, SESSION_COOKIE);
  const claims = deps.sessions.verify(cookie);
  if (!claims || cookie === undefined) return undefined;
  if (changesState(request.method)) {
    const origin = { origin: request.headers.origin, referer: request.headers.referer };
    if (!fromOwnOrigin(origin, { protocol: request.protocol, host: request.host })) {
      throw forbidden("Cross-origin request refused: a console request must come from this server's own pages");
    }
    const token = request.headers[CSRF_HEADER];
    if (!deps.sessions.csrfMatches(cookie, typeof token === 'string' ? token : undefined)) {
      throw forbidden('Missing or invalid CSRF token');
    }
  }
  return deps.principalOfKey(claims.keyId);
}

function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/** The RateLimit-* headers of a decision, and the 429 when it refused. */
export function applyRateDecision(reply: FastifyReply, d: RateDecision): void {
  reply.header('RateLimit-Limit', d.window.limit);
  reply.header('RateLimit-Remaining', d.remaining);
  reply.header('RateLimit-Reset', d.reset);
  if (!d.allowed) {
    throw new ServiceError('RATE_LIMITED', `Rate limit exceeded: ${d.window.limit} requests per ${d.window.name}`, { 'Retry-After': String(d.retryAfter) });
  }
}

/**
 * Every route registered inside the plugin this is installed in requires a key. Authentication
 * and the rate limit run before the body is parsed, so a flood of bad bodies is still limited.
 */
export function installAuth(app: FastifyInstance, deps: AuthDeps): void {
  app.decorateRequest('principal', null as unknown as Principal);
  app.decorateRequest('rate', null as unknown as RateDecision);
  app.addHook('onRequest', async (request, reply) => {
    const viaCookie = request.headers.authorization === undefined && deps.console ? await sessionPrincipal(request, deps.console) : undefined;
    const principal = viaCookie ?? (await deps.authenticate(bearer(request)));
    request.principal = principal;
    request.rate = await deps.rateLimit(principal);
    applyRateDecision(reply, request.rate);
  });
}
