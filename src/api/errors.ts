import type { FastifyError, FastifyInstance } from 'fastify';
import type { ErrorObject } from 'ajv';
import { ServiceError } from '../core/errors.ts';

const field = (path: string): string => path.replace(/^\//, '').replaceAll('/', '.');
const named = (base: string, child: string) => (base ? `${base}.${child}` : child);

const article = (type: string): string => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

function branchTypes(schemas: { type?: string; items?: { type?: string } }[]): string {
  return schemas
    .map((s) => (s.type === 'array' ? `an array${s.items?.type ? ` of ${s.items.type}s` : ''}` : article(s.type ?? 'value')))
    .join(' or ');
}

/** One sentence naming the field and the problem, e.g. ``Missing required field `subject` ``. */
export function validationMessage(errors: ErrorObject[], context: string): string {
  const e = errors.find((x) => x.keyword === 'anyOf' || x.keyword === 'oneOf') ?? errors[0];
  const path = field(e.instancePath);
  const where = context === 'body' ? '' : ` in the ${context === 'querystring' ? 'query string' : context}`;
  switch (e.keyword) {
    case 'required':
      return `Missing required field \`${named(path, (e.params as { missingProperty: string }).missingProperty)}\`${where}`;
    case 'additionalProperties':
      return `Unknown field \`${named(path, (e.params as { additionalProperty: string }).additionalProperty)}\`${where}`;
    case 'type':
      return path
        ? `Field \`${path}\` must be ${article((e.params as { type: string }).type)}${where}`
        : `The request ${context} must be ${article(`JSON ${(e.params as { type: string }).type}`)}`;
    case 'anyOf':
    case 'oneOf':
      return `Field \`${path}\` must be ${branchTypes((e.parentSchema?.[e.keyword] ?? []) as { type?: string }[])}${where}`;
    case 'enum':
      return `Field \`${path}\` must be one of: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}${where}`;
    case 'const':
      return `Field \`${path}\` must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}${where}`;
    default:
      return `Field \`${path || context}\` ${e.message ?? 'is invalid'}${where}`;
  }
}

const FASTIFY_MESSAGES: Record<string, (err: FastifyError, bodyLimit: number) => string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: () => 'Request body is not valid JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: () => 'Request body is empty; send a JSON object',
  FST_ERR_CTP_BODY_TOO_LARGE: (_e, limit) => `Request body exceeds the limit of ${limit} bytes`,
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => 'Unsupported Content-Type; send application/json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => 'Content-Length does not match the body',
};

/** The one place where errors become `{"error": sentence}` responses. */
export function installErrorHandling(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof ServiceError) {
      return reply.code(err.status).headers(err.headers).send({ error: err.message });
    }
    if (err.validation) {
      return reply.code(422).send({ error: validationMessage(err.validation as ErrorObject[], err.validationContext ?? 'body') });
    }
    const known = err.code ? FASTIFY_MESSAGES[err.code] : undefined;
    if (known) return reply.code(err.statusCode ?? 400).send({ error: known(err, bodyLimit) });
    if (err instanceof SyntaxError || (err.statusCode === 400 && /JSON/i.test(err.message))) {
      return reply.code(400).send({ error: 'Request body is not valid JSON' });
    }
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return reply.code(err.statusCode).send({ error: err.message });
    }
    request.log.error({ err, phase: 'http' }, 'unhandled error');
    return reply.code(500).send({ error: 'Internal server error' });
  });

  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({ error: `Not found: ${request.method} ${request.url.split('?')[0]}` }),
  );
}
