import Ajv from 'ajv';
import type { FastifySchemaCompiler, FastifyServerOptions } from 'fastify';

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

const newAjv = (coerceTypes: false | 'array', externalSchemas: Record<string, unknown>) => {
  const ajv = new Ajv.default({ coerceTypes, allErrors: false, verbose: true, removeAdditional: false, useDefaults: true });
  ajv.addKeyword('example');
  for (const schema of Object.values(externalSchemas)) ajv.addSchema(schema as object);
  return ajv;
};

function compilerFor(externalSchemas: Record<string, unknown>): FastifySchemaCompiler<unknown> {
  const strict = newAjv(false, externalSchemas);
  const coercing = newAjv('array', externalSchemas);
  return ({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema as object);
}

/**
 * Bodies are validated strictly: a number where a string belongs is a 422, and an unknown field
 * is refused rather than silently dropped. Query strings and path parameters arrive as text, so
 * those are coerced to the schema's types. Given to Fastify as a compilers factory so contexts
 * that add shared schemas keep it. (Fastify's typings describe its pooled Ajv compiler; at run
 * time the factory's result is called with the route schema, as FastifySchemaCompiler says.)
 */
export const buildValidator = compilerFor as unknown as CompilersFactory['buildValidator'];
