import Ajv from 'ajv';
import type { FastifyInstance } from 'fastify';

/**
 * Bodies are validated strictly: a number where a string belongs is a 422, never coerced.
 * Query strings and path parameters arrive as text, so those are coerced to the schema's types.
 */
export function installValidators(app: FastifyInstance): void {
  const strict = new Ajv.default({ coerceTypes: false, allErrors: false, verbose: true, removeAdditional: false, useDefaults: true });
  const coercing = new Ajv.default({ coerceTypes: 'array', allErrors: false, verbose: true, removeAdditional: false, useDefaults: true });
  for (const ajv of [strict, coercing]) ajv.addKeyword('example');
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema));
}
