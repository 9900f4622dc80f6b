import { existsSync, readFileSync } from 'node:fs';
import { hostname as machineName } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Value } from '@sinclair/typebox/value';
import { parseCidr } from '../core/cidr.ts';
import { envNames, schemaAt, unknownEnvProblems, validationProblem } from './explain.ts';
import { ConfigSchema, type Config } from './schema.ts';
import { compileReplyRules } from '../shaping/reply-rules.ts';
import type { ReplyRule } from '../shaping/types.ts';

export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

export interface LoadOptions {
  /** The file named by --config (falls back to MAILSVC_CONFIG). */
  file?: string;
  env?: NodeJS.ProcessEnv;
  /** Highest layer: values from CLI flags, as a partial config object. */
  overrides?: Record<string, unknown>;
  /** Where config/default.json and config/local.json live. */
  root?: string;
  /**
   * Whether to read config/local.json. Defaults to yes unless the process has
   * MAILSVC_NO_LOCAL_CONFIG set: the test suite sets it so that a developer's own overrides
   * never change test results, whichever env a test passes.
   */
  local?: boolean;
}

type Tree = Record<string, unknown>;
const isTree = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v);

function merge(base: Tree, layer: Tree): Tree {
  const out: Tree = { ...base };
  for (const [key, value] of Object.entries(layer)) {
    out[key] = isTree(value) && isTree(out[key]) ? merge(out[key] as Tree, value) : value;
  }
  return out;
}

function readJson(path: string): Tree {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError([`${path}: ${(err as Error).message}`]);
  }
  if (!isTree(parsed)) throw new ConfigError([`${path}: must hold a JSON object`]);
  return parsed;
}

const ENV_NAMES = envNames(ConfigSchema);

/**
 * The MAILSVC_* layer, and which variable set each key. A value the key accepts as text stays
 * text (a password of digits stays a string); anything else is read as JSON when it parses.
 */
function envLayer(env: NodeJS.ProcessEnv): { layer: Tree; sources: Map<string, string> } {
  const layer: Tree = {};
  const sources = new Map<string, string>();
  for (const [name, path] of ENV_NAMES) {
    const raw = env[name];
    if (raw === undefined) continue;
    const pointer = `/${path.join('/')}`;
    const leaf = schemaAt(ConfigSchema, pointer);
    let value: unknown = raw;
    if (!leaf || !Value.Check(leaf, raw)) {
      try {
        value = JSON.parse(raw);
      } catch {
        // not JSON: validation names the expected format
      }
    }
    let node = layer;
    for (const key of path.slice(0, -1)) node = (node[key] ??= {}) as Tree;
    node[path[path.length - 1]] = value;
    sources.set(pointer, name);
  }
  return { layer, sources };
}

/** A reply rule whose `/regex/` does not compile, or could take time out of proportion to a reply, is named with why. */
function shapingRuleProblems(rules: ReplyRule[]): string[] {
  return rules.flatMap((rule, i) => {
    try {
      compileReplyRules([rule]);
      return [];
    } catch (err) {
      return [`shaping.rules.${i}.match: ${(err as Error).message}`];
    }
  });
}

interface PoolShape {
  sourceAddresses: { address: string }[];
  pools: Record<string, string[]>;
  streamPools: Record<string, string | undefined>;
  warmup: Record<string, unknown>;
}

/** Pools hold configured source addresses only, streams name configured pools, warm-up names configured addresses. */
function poolProblems(d: PoolShape): string[] {
  const addresses = new Set(d.sourceAddresses.map((a) => a.address));
  const problems: string[] = [];
  if (addresses.size !== d.sourceAddresses.length) problems.push('delivery.sourceAddresses: an address is listed twice');
  // `mailsvc domain pool D none` clears a pool: a pool of that name could not be chosen there.
  if ('none' in d.pools) problems.push('delivery.pools.none: "none" is reserved (it clears a workspace\'s or domain\'s pool); name the pool otherwise');
  for (const [name, list] of Object.entries(d.pools)) {
    for (const address of list) if (!addresses.has(address)) problems.push(`delivery.pools.${name}: ${address} is not one of delivery.sourceAddresses`);
  }
  for (const [stream, pool] of Object.entries(d.streamPools)) {
    if (pool !== undefined && !(pool in d.pools)) problems.push(`delivery.streamPools.${stream}: no pool named ${pool} in delivery.pools`);
  }
  for (const address of Object.keys(d.warmup)) if (!addresses.has(address)) problems.push(`delivery.warmup.${address}: not one of delivery.sourceAddresses`);
  return problems;
}

/** Reads every layer, validates, and resolves derived defaults. Throws ConfigError naming every bad key. */
export function loadConfig(options: LoadOptions = {}): Config {
  const env = options.env ?? process.env;
  const readLocal = options.local ?? !process.env.MAILSVC_NO_LOCAL_CONFIG;
  const root = options.root ?? PROJECT_ROOT;
  let tree: Tree = readJson(join(root, 'config/default.json'));
  const local = join(root, 'config/local.json');
  if (readLocal && existsSync(local)) tree = merge(tree, readJson(local));
  const file = options.file ?? env.MAILSVC_CONFIG;
  if (file) {
    if (!existsSync(file)) throw new ConfigError([`config file ${file} does not exist`]);
    tree = merge(tree, readJson(file));
  }
  const { layer, sources } = envLayer(env);
  tree = merge(tree, layer);
  if (options.overrides) tree = merge(tree, options.overrides);

  const withDefaults = Value.Default(ConfigSchema, Value.Clone(tree)) as Tree;
  const problems = unknownEnvProblems(env, ENV_NAMES);
  const seen = new Set<string>();
  for (const e of Value.Errors(ConfigSchema, withDefaults)) {
    if (seen.has(e.path)) continue; // one sentence per key
    seen.add(e.path);
    problems.push(
      e.message === 'Unexpected property'
        ? `${e.path.replace(/^\//, '').replaceAll('/', '.')}: unknown key`
        : validationProblem(ConfigSchema, e.path, e.value, e.message, sources),
    );
  }
  if (problems.length === 0) {
    problems.push(...proxyProblems((withDefaults as { http: { trustProxy: string[] } }).http.trustProxy));
    problems.push(...trustedNetworkProblems((withDefaults as { submission: { trustedNetworks: { network: string }[] } }).submission.trustedNetworks));
    problems.push(...shapingRuleProblems((withDefaults as { shaping: { rules: ReplyRule[] } }).shaping.rules));
    problems.push(...poolProblems((withDefaults as { delivery: PoolShape }).delivery));
    problems.push(...trustedCaProblems((withDefaults as { tls: { trustedCAs: string | null } }).tls.trustedCAs));
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return resolveDerived(withDefaults as unknown as RawShape, root);
}

/** `tls.trustedCAs` is read when delivery starts; a file that cannot be is named now, with its key. */
function trustedCaProblems(file: string | null): string[] {
  if (file === null || file.includes('-----BEGIN')) return [];
  try {
    if (!readFileSync(file, 'utf8').includes('-----BEGIN CERTIFICATE-----')) return [`tls.trustedCAs: ${file} holds no PEM certificate`];
    return [];
  } catch (err) {
    return [`tls.trustedCAs: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`];
  }
}

/** `http.trustProxy` entries the schema's pattern lets through but that name no address or range. */
function proxyProblems(entries: string[]): string[] {
  return entries.flatMap((entry) => (parseCidr(entry) ? [] : [`http.trustProxy: "${entry}" is not an IP address or a CIDR range (e.g. "127.0.0.1", "10.0.0.0/8")`]));
}

/** `submission.trustedNetworks` entries the schema's pattern lets through but that name no address or range. */
function trustedNetworkProblems(entries: { network: string }[]): string[] {
  return entries.flatMap(({ network }, i) =>
    parseCidr(network) ? [] : [`submission.trustedNetworks[${i}].network: "${network}" is not an IP address or a CIDR range (e.g. "10.0.0.0/8")`],
  );
}

type RawShape = Omit<Config, 'server' | 'http' | 'submission' | 'inbound' | 'tracking' | 'database'> & {
  server: { hostname: string | null };
  http: Omit<Config['http'], 'host'> & { host: string | null };
  submission: Omit<Config['submission'], 'host'> & { host: string | null };
  inbound: Omit<Config['inbound'], 'returnPathDomain' | 'host'> & { returnPathDomain: string | null; host: string | null };
  tracking: Omit<Config['tracking'], 'baseUrl'> & { baseUrl: string | null };
  database: { client: 'sqlite' | 'pg'; connection: string | { filename: string } | null; pool: number };
};

function resolveDerived(raw: RawShape, root: string): Config {
  const hostname = (raw.server.hostname ?? machineName()).toLowerCase();
  const dataDir = isAbsolute(raw.dataDir) ? raw.dataDir : resolve(root, raw.dataDir);
  let database: Config['database'];
  if (raw.database.client === 'pg') {
    if (typeof raw.database.connection !== 'string') {
      throw new ConfigError(['database.connection: a PostgreSQL connection string is required with client "pg"']);
    }
    database = { client: 'pg', connection: raw.database.connection, pool: raw.database.pool };
  } else {
    const conn = raw.database.connection;
    const filename = typeof conn === 'object' && conn ? conn.filename : join(dataDir, 'mailsvc.sqlite');
    database = { client: 'sqlite', connection: { filename: isAbsolute(filename) ? filename : resolve(root, filename) }, pool: raw.database.pool };
  }
  // The sandbox is for trying things on this machine: unless told otherwise, nothing of it is
  // reachable from the network.
  const listen = (host: string | null) => host ?? (raw.delivery.mode === 'sandbox' ? '127.0.0.1' : '0.0.0.0');
  const config = {
    ...raw,
    dataDir,
    database,
    server: { hostname },
    http: { ...raw.http, host: listen(raw.http.host) },
    submission: { ...raw.submission, host: listen(raw.submission.host) },
    inbound: { ...raw.inbound, host: listen(raw.inbound.host), returnPathDomain: (raw.inbound.returnPathDomain ?? `bounces.${hostname}`).toLowerCase() },
    tracking: { ...raw.tracking, baseUrl: (raw.tracking.baseUrl ?? `http://${hostname}:${raw.http.port}`).replace(/\/+$/, '') },
  };
  return deepFreeze(config) as Config;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** A warning for the start-up log, or null. */
export function hostnameWarning(config: Config): string | null {
  return config.server.hostname.includes('.')
    ? null
    : `server.hostname "${config.server.hostname}" is not a fully qualified domain name; set it to the name remote servers can resolve`;
}
