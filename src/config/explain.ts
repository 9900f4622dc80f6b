// Turns schema validation failures and stray MAILSVC_* variables into sentences that name the
// key, the expected format with an example, and, for a mistyped name, the nearest real one.

import { distance } from 'fastest-levenshtein';
import { Kind, type TObject, type TSchema } from '@sinclair/typebox';

/**
 * MAILSVC_* names that are not configuration keys: the config file, the switch that skips
 * config/local.json, the switch that makes bin/mailsvc run the sources instead of dist/, and the
 * prefixes the test suite and benchmarks use for their own settings.
 */
export const RESERVED_ENV = ['MAILSVC_CONFIG', 'MAILSVC_NO_LOCAL_CONFIG', 'MAILSVC_FROM_SOURCE'];
export const RESERVED_ENV_PREFIXES = ['MAILSVC_TEST_', 'MAILSVC_BENCH_'];

/** `http.bodyLimit` ↔ `MAILSVC_HTTP_BODY_LIMIT`, derived from the schema's leaves. */
export function envNames(schema: TObject, prefix: string[] = []): Map<string, string[]> {
  const names = new Map<string, string[]>();
  for (const [key, child] of Object.entries(schema.properties) as [string, TSchema][]) {
    const path = [...prefix, key];
    if (child.type === 'object' && child.properties) {
      for (const [name, p] of envNames(child as TObject, path)) names.set(name, p);
    } else {
      const words = path.map((p) => p.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase());
      names.set(`MAILSVC_${words.join('_')}`, path);
    }
  }
  return names;
}

/** One problem per MAILSVC_* variable that maps to no key, naming the nearest key's variable. */
export function unknownEnvProblems(env: NodeJS.ProcessEnv, known: Map<string, string[]>): string[] {
  const problems: string[] = [];
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith('MAILSVC_') || known.has(name) || RESERVED_ENV.includes(name)) continue;
    if (RESERVED_ENV_PREFIXES.some((p) => name.startsWith(p))) continue;
    let best = '';
    let bestDistance = Infinity;
    for (const candidate of [...known.keys(), ...RESERVED_ENV]) {
      const d = distance(name, candidate);
      if (d < bestDistance) [best, bestDistance] = [candidate, d];
    }
    const key = known.get(best);
    problems.push(`${name}: no such setting; did you mean ${best}${key ? ` (${key.join('.')})` : ''}?`);
  }
  return problems;
}

/** The schema node at a JSON pointer such as `/delivery/relayHost` or `/dns/servers/0`. */
export function schemaAt(root: TSchema, pointer: string): TSchema | undefined {
  let node: TSchema | undefined = root;
  for (const part of pointer.split('/').filter(Boolean)) {
    if (!node) return undefined;
    if (node.type === 'object') node = node.properties?.[part];
    else if (node.type === 'array') node = node.items as TSchema;
    else return undefined;
  }
  return node;
}

const quote = (v: unknown) => JSON.stringify(v);

/** "an integer from 0 to 65535", "one of \"a\", \"b\"", or the schema's own `expected` hint. */
export function expectedOf(schema: TSchema): string {
  if (typeof schema.expected === 'string') return schema.expected;
  if (schema.anyOf) {
    const options = (schema.anyOf as TSchema[]).filter((s) => s.type !== 'null');
    const nullable = options.length < (schema.anyOf as TSchema[]).length;
    const literals = options.every((s) => s.const !== undefined);
    const text = literals ? `one of ${options.map((s) => quote(s.const)).join(', ')}` : options.map(expectedOf).join(' or ');
    return nullable ? `${text}, or null` : text;
  }
  switch (schema.type) {
    case 'integer': {
      const { minimum: min, maximum: max } = schema as { minimum?: number; maximum?: number };
      if (min !== undefined && max !== undefined) return `an integer from ${min} to ${max}`;
      if (min !== undefined) return `an integer of at least ${min}`;
      return 'an integer';
    }
    case 'boolean':
      return 'true or false';
    case 'string':
      if (schema.pattern) return `text matching ${schema.pattern}`;
      return schema.minLength ? 'non-empty text' : 'text';
    case 'array':
      return `a JSON array, each item ${expectedOf(schema.items as TSchema)}`;
    case 'object':
      return 'a JSON object';
    default:
      return String(schema[Kind] ?? 'a value');
  }
}

/** An example value: the schema's `examples`, else its default when that is not null. */
export function exampleOf(schema: TSchema): string | null {
  const examples = schema.examples as unknown[] | undefined;
  if (examples?.length) return typeof examples[0] === 'string' ? String(examples[0]) : quote(examples[0]);
  if (schema.default !== undefined && schema.default !== null) {
    return typeof schema.default === 'string' ? String(schema.default) : quote(schema.default);
  }
  if (schema.anyOf) {
    for (const option of schema.anyOf as TSchema[]) {
      const example = option.const !== undefined ? quote(option.const) : exampleOf(option);
      if (example) return example;
    }
  }
  return null;
}

/** `delivery.relayHost: expected host:port, e.g. smtp.example.com:587 (got "127.0.0.1")`. */
export function validationProblem(root: TSchema, pointer: string, value: unknown, fallback: string, sources: Map<string, string>): string {
  // An array item's problem is told about the array key, whose format names the items.
  const item = /^(.*?)\/(\d+)(?:\/.*)?$/.exec(pointer);
  const keyPointer = item ? item[1] : pointer;
  const got = `got ${quote(value)}${item ? ` at item ${item[2]}` : ''}`;
  const key = keyPointer.replace(/^\//, '').replaceAll('/', '.') || '(root)';
  const source = sources.get(keyPointer);
  const from = source ? ` (from ${source})` : '';
  const schema = schemaAt(root, keyPointer);
  if (!schema) return `${key}${from}: ${fallback} (${got})`;
  const example = exampleOf(schema);
  return `${key}${from}: expected ${expectedOf(schema)}${example ? `, e.g. ${example}` : ''} (${got})`;
}
