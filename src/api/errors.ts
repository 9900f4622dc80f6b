import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorObject } from 'ajv';
import { ServiceError } from '../core/errors.ts';

const field = (path: string): string => path.replace(/^\//, '').replaceAll('/', '.');
const named = (base: string, child: string) => (base ? `${base}.${child}` : child);

const article = (type: string): string => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

function branchTypes(schemas: { type?: string; items?: { type?: string } }[]): string {
  return schemas.map((s) => (s.type === 'array' ? `an array${s.items?.type ? ` of ${s.items.type}s` : ''}` : article(s.type ?? 'value'))).join(' or ');
}

const NOUNS: Record<string, string> = { body: 'field', querystring: 'query parameter', headers: 'header', params: 'path parameter' };

/** One sentence naming the field and the problem, e.g. ``Missing required field `subject` ``. */
export function validationMessage(errors: ErrorObject[], context: string): string {
  const e = errors.find((x) => x.keyword === 'anyOf' || x.keyword === 'oneOf') ?? errors[0];
  // A body that is an array (a batch) names the item, counted from 0, then the field in it.
  const item = context === 'body' ? /^\/(\d+)(?=\/|$)/.exec(e.instancePath) : null;
  if (item) return `Item ${item[1]}: ${validationMessage([{ ...e, instancePath: e.instancePath.slice(item[0].length) }], context)}`;
  const path = field(e.instancePath);
  const noun = NOUNS[context] ?? 'field';
  const subject = `${noun[0].toUpperCase()}${noun.slice(1)} \`${path}\``;
  switch (e.keyword) {
    case 'required':
      return `Missing required ${noun} \`${named(path, (e.params as { missingProperty: string }).missingProperty)}\``;
    case 'additionalProperties':
      return `Unknown ${noun} \`${named(path, (e.params as { additionalProperty: string }).additionalProperty)}\``;
    case 'type':
      return path
        ? `${subject} must be ${article((e.params as { type: string }).type)}`
        : `The request ${context} must be ${article(`JSON ${(e.params as { type: string }).type}`)}`;
    case 'anyOf':
    case 'oneOf':
      return `${subject} must be ${branchTypes((e.parentSchema?.[e.keyword] ?? []) as { type?: string }[])}`;
    case 'enum':
      return `${subject} must be one of: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
    case 'const':
      return `${subject} must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`;
    case 'pattern':
      return `${subject} is not in the expected form`;
    case 'maxItems':
    case 'minItems': {
      const limit = (e.params as { limit: number }).limit;
      const bound = e.keyword === 'maxItems' ? 'at most' : 'at least';
      return `${path ? subject : `The request ${context}`} must hold ${bound} ${limit} item${limit === 1 ? '' : 's'}`;
    }
    default:
      return `${path ? subject : `The request ${context}`} ${e.message ?? 'is invalid'}`;
  }
}

const FASTIFY_MESSAGES: Record<string, (err: FastifyError, bodyLimit: number) => string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: () => 'Request body is not valid JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: () => 'Request body is empty; send a JSON object',
  FST_ERR_CTP_BODY_TOO_LARGE: (_e, limit) => `Request body exceeds the limit of ${byteSize(limit)} (${limit} bytes)`,
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => 'Unsupported Content-Type; send application/json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => 'Content-Length does not match the body',
  FST_ERR_CTP_INVALID_CONTENT_TYPE: () => 'Content-Type is not a valid media type',
  FST_ERR_BAD_URL: () => 'The request path is not valid percent-encoding',
};

/** 4096 → "4 KB", 10485760 → "10 MB": the limit as an operator configured it. */
const byteSize = (n: number): string => (n % 1_048_576 === 0 ? `${n / 1_048_576} MB` : n % 1024 === 0 ? `${n / 1024} KB` : `${n} bytes`);

const MAX_ECHOED_PATH = 200;

/** Errors Fastify raises before a route is found: bad percent-encoding, an over-long parameter. */
export function frameworkError(err: FastifyError, reply: FastifyReply): void {
  // No id is longer than the router's parameter limit, so what was asked for does not exist.
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') reply.code(404).send({ error: 'Not found' });
  else reply.code(400).send({ error: FASTIFY_MESSAGES[err.code ?? ''] ? FASTIFY_MESSAGES[err.code](err, 0) : 'Bad request' });
}

const CLIENT_ERRORS: Record<string, [number, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request timed out'],
  HPE_HEADER_OVERFLOW: [431, 'Request headers are too large'],
};

/**
 * Requests Node's HTTP parser cannot read (a broken request line, oversized headers) never reach
 * Fastify; the answer is still `{"error": ...}`, then the connection closes.
 */
export function clientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] = CLIENT_ERRORS[err.code ?? ''] ?? [400, 'Malformed HTTP request'];
  const body = JSON.stringify({ error: message });
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${message}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy();
}

/** The one place where errors become `{"error": sentence}` responses. */
export function installErrorHandling(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof ServiceError) {
      return reply.code(err.status).headers(err.headers).send({ error: err.message });
    }
    if (err.validation) {
      const context = err.validationContext ?? 'body';
      // Ids and names in paths that do not validate name nothing that exists.
      if (context === 'params') return reply.code(404).send({ error: 'Not found' });
      return reply.code(422).send({ error: validationMessage(err.validation as ErrorObject[], context) });
    }
    const known = err.code ? FASTIFY_MESSAGES[err.code] : undefined;
    // The route's own limit (4 KB on the unauthenticated routes) when it has one, else the server's.
    if (known) return reply.code(err.statusCode ?? 400).send({ error: known(err, request.routeOptions.bodyLimit ?? bodyLimit) });
    if (err instanceof SyntaxError || (err.statusCode === 400 && /JSON/i.test(err.message))) {
      return reply.code(400).send({ error: 'Request body is not valid JSON' });
    }
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return reply.code(err.statusCode).send({ error: err.message });
    }
    request.log.error({ err, phase: 'http' }, 'unhandled error');
    return reply.code(500).send({ error: 'Internal server error' });
  });

  const notFound = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0];
    const shown = path.length > MAX_ECHOED_PATH ? `${path.slice(0, MAX_ECHOED_PATH)}...` : path;
    return reply.code(404).send({ error: `Not found: ${request.method} ${shown}` });
  };
  // Answered before the body is read: a path that names nothing gets no parser, whatever it sends.
  app.addHook('onRequest', async (request, reply) => {
    if (request.is404) return notFound(request, reply);
  });
  app.setNotFoundHandler(notFound);
}
