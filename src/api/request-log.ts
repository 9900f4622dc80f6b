import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * One log line per request, written when it completes, with the request (method, URL, client)
 * and its outcome together. Fastify's default also writes a line as each request comes in: one
 * more serialisation and write per request, at thousands of requests a second (docs/PERFORMANCE.md,
 * `api`). Errors, 404s and the rest are logged as Fastify does.
 */
export class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    if (error) reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }

  override routeNotFound(request: FastifyRequest): void {
    if (!this.isLogDisabled(request)) request.log.info({ req: request }, 'route not found');
  }
}

/** Characters of a tracking token kept in the log: enough to tell hits apart, too few to replay one. */
const TOKEN_SHOWN = 8;
const TRACKING_PATH = /^(\/t\/[ocu]\/)(.*)$/s;

/**
 * The URL as logged: no query string (a key passed as `?api_key=`, a token, an address), only
 * whether there was one; a tracking token (the credential of `/t/...`, an unsubscribe for whoever
 * holds it) cut to its first characters.
 */
export function loggedUrl(url: string): string {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const tracking = TRACKING_PATH.exec(path);
  const shown = tracking && tracking[2].length > TOKEN_SHOWN ? `${tracking[1]}${tracking[2].slice(0, TOKEN_SHOWN)}...` : path;
  return q === -1 ? shown : `${shown}?[redacted]`;
}

/** What a log line says of a request: Fastify's fields, the URL through `loggedUrl`. */
function loggedRequest(request: FastifyRequest) {
  return { method: request.method, url: loggedUrl(request.url), host: request.host, remoteAddress: request.ip, remotePort: request.socket?.remotePort };
}

/** The logger the app writes with: the service's, its `req` field serialised by `loggedRequest`. */
export const requestLogger = (log: FastifyBaseLogger): FastifyBaseLogger => log.child({}, { serializers: { req: loggedRequest } });
