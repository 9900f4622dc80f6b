import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../core/errors.ts';
import type { Principal } from '../tenancy/principal.ts';
import type { RateDecision } from '../ratelimit/sliding.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}

export interface AuthDeps {
  authenticate(token: string | undefined): Promise<Principal>;
  rateLimit(principal: Principal): Promise<RateDecision>;
}

function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

function setRateHeaders(reply: FastifyReply, d: RateDecision): void {
  reply.header('RateLimit-Limit', d.window.limit);
  reply.header('RateLimit-Remaining', d.remaining);
  reply.header('RateLimit-Reset', d.reset);
}

/**
 * Every route registered inside the plugin this is installed in requires a key. Authentication
 * and the rate limit run before the body is parsed, so a flood of bad bodies is still limited.
 */
export function installAuth(app: FastifyInstance, deps: AuthDeps): void {
  app.decorateRequest('principal', null as unknown as Principal);
  app.addHook('onRequest', async (request, reply) => {
    const principal = await deps.authenticate(bearer(request));
    request.principal = principal;
    const decision = await deps.rateLimit(principal);
    setRateHeaders(reply, decision);
    if (!decision.allowed) {
      const per = decision.window.name;
      throw new ServiceError('RATE_LIMITED', `Rate limit exceeded: ${decision.window.limit} requests per ${per}`, {
        'Retry-After': String(decision.retryAfter),
      });
    }
  });
}
