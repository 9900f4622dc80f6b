import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import Ajv, { type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler, FastifySerializerCompiler, FastifyServerOptions } from 'fastify';

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

/**
 * Compiling the routes' schemas is most of what building the app costs (about a second on a busy
 * machine), and every app of a process compiles the same ones. An app built again (a test
 * server, a restart in place) takes each compiled validator and serializer from here, found by
 * what it was compiled from: the schema's content and the shared schemas beside it.
 */
function kept<F>(cache: Map<string, F>, key: string, compile: () => F): F {
  let compiled = cache.get(key);
  if (compiled === undefined) cache.set(key, (compiled = compile()));
  return compiled;
}

const newAjv = (coerceTypes: false | 'array', externalSchemas: Record<string, unknown>) => {
  const ajv = new Ajv.default({ coerceTypes, allErrors: false, verbose: true, removeAdditional: false, useDefaults: true });
  ajv.addKeyword('example');
  for (const schema of Object.values(externalSchemas)) ajv.addSchema(schema as object);
  return ajv;
};

const validatorCompilers = new Map<string, { strict: Ajv.default; coercing: Ajv.default }>();
const validators = new Map<string, ValidateFunction>();

function validatorFor(externalSchemas: Record<string, unknown>): FastifySchemaCompiler<unknown> {
  const shared = JSON.stringify(externalSchemas);
  const { strict, coercing } = kept(validatorCompilers, shared, () => ({ strict: newAjv(false, externalSchemas), coercing: newAjv('array', externalSchemas) }));
  return ({ schema, httpPart }) => {
    const coerce = httpPart !== 'body';
    return kept(validators, `${coerce ? 'coercing' : 'strict'}\n${shared}\n${JSON.stringify(schema)}`, () => (coerce ? coercing : strict).compile(schema as object));
  };
}

/**
 * Bodies are validated strictly: a number where a string belongs is a 422, and an unknown field
 * is refused rather than silently dropped. Query strings and path parameters arrive as text, so
 * those are coerced to the schema's types. Given to Fastify as a compilers factory so contexts
 * that add shared schemas keep it. (Fastify's typings describe its pooled Ajv compiler; at run
 * time the factory's result is called with the route schema, as FastifySchemaCompiler says.)
 */
export const buildValidator = validatorFor as unknown as CompilersFactory['buildValidator'];

const fastifySerializers = SerializerSelector();
const serializers = new Map<string, (data: unknown) => string>();

type SerializerFactory = NonNullable<CompilersFactory['buildSerializer']>;

/** Fastify's own response serializers (fast-json-stringify), each compiled once per process. */
export const buildSerializer: SerializerFactory = (externalSchemas, options) => {
  const compile = fastifySerializers(externalSchemas, options) as FastifySerializerCompiler<unknown>;
  const shared = JSON.stringify([externalSchemas, options]);
  return ((route: Parameters<FastifySerializerCompiler<unknown>>[0]) =>
    kept(serializers, `${shared}\n${JSON.stringify(route.schema)}`, () => compile(route) as (data: unknown) => string)) as unknown as ReturnType<SerializerFactory>;
};
