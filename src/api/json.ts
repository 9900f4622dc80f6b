import type { FastifyInstance } from 'fastify';
import sjson from 'secure-json-parse';
import { badRequest, invalid } from '../core/errors.ts';

const FORBIDDEN = { protoAction: 'error', constructorAction: 'error' } as const;

/**
 * JSON bodies, parsed by secure-json-parse so that no `__proto__` or `constructor.prototype` key
 * ever reaches a handler that might merge it into an object. Such a body is valid JSON, so it is
 * refused with a 422 naming the key rather than called malformed (Fastify's own parser says
 * "invalid JSON" for both).
 */
export function installJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.length === 0) return done(badRequest('Request body is empty; send a JSON object'), undefined);
    try {
      return done(null, sjson.parse(text, null, FORBIDDEN));
    } catch {
      return done(refusal(text), undefined);
    }
  });
}

/** Why secure-json-parse refused a body (it says "forbidden prototype property" for all three). */
function refusal(text: string): Error {
  const fails = (options: object) => {
    try {
      sjson.parse(text, null, options);
      return false;
    } catch {
      return true;
    }
  };
  if (fails({ protoAction: 'ignore', constructorAction: 'ignore' })) return badRequest('Request body is not valid JSON');
  const key = fails({ protoAction: 'error', constructorAction: 'ignore' }) ? '__proto__' : 'constructor.prototype';
  return invalid(`Field \`${key}\` is not allowed anywhere in a request body`);
}
