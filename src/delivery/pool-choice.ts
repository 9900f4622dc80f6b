import type { Config } from '../config/schema.ts';

/** What a message's pool is chosen from: the names its domain and workspace store, and its stream. */
export interface PoolInput {
  domainPool: string | null;
  workspacePool: string | null;
  stream: 'transactional' | 'broadcast';
}

export interface PoolChoice {
  /** The pool's name in delivery.pools; null for the default pool (every source address). */
  name: string | null;
  /** Which setting chose it. */
  from: 'domain' | 'workspace' | 'stream' | 'default';
  /** The source addresses to send from; empty when none is configured (the kernel picks, EHLO server.hostname). */
  addresses: readonly string[];
  /** Set when a stored name is no longer in delivery.pools (the configuration changed after it was set): what was skipped. */
  warning?: string;
}

export type PoolSettings = Pick<Config['delivery'], 'sourceAddresses' | 'pools' | 'streamPools'>;

const everyAddress = new WeakMap<PoolSettings['sourceAddresses'], readonly string[]>();

function defaultPool(delivery: PoolSettings): readonly string[] {
  let addresses = everyAddress.get(delivery.sourceAddresses);
  if (!addresses) {
    addresses = Object.freeze(delivery.sourceAddresses.map((a) => a.address));
    everyAddress.set(delivery.sourceAddresses, addresses);
  }
  return addresses;
}

const LEVEL_NAMES = { domain: "the domain's", workspace: "the workspace's", stream: "the stream's" } as const;

/**
 * The pool a message is sent from (SPEC §12): the most specific setting wins — its domain's
 * pool, else its workspace's, else `delivery.streamPools[stream]`, else every source address.
 * A stored name that delivery.pools no longer has is passed over, and `warning` says so.
 */
export function poolFor(input: PoolInput, delivery: PoolSettings): PoolChoice {
  const levels = [
    ['domain', input.domainPool],
    ['workspace', input.workspacePool],
    ['stream', delivery.streamPools[input.stream] ?? null],
  ] as const;
  const skipped: string[] = [];
  for (const [from, name] of levels) {
    if (name === null) continue;
    const addresses = Object.hasOwn(delivery.pools, name) ? delivery.pools[name] : undefined;
    if (addresses) return withWarning({ name, from, addresses }, skipped);
    skipped.push(`${LEVEL_NAMES[from]} pool "${name}"`);
  }
  return withWarning({ name: null, from: 'default', addresses: defaultPool(delivery) }, skipped);
}

function withWarning(choice: PoolChoice, skipped: string[]): PoolChoice {
  if (skipped.length === 0) return choice;
  const chosen = choice.name === null ? 'every source address' : `${LEVEL_NAMES[choice.from as keyof typeof LEVEL_NAMES]} pool "${choice.name}"`;
  return { ...choice, warning: `${skipped.join(' and ')} ${skipped.length > 1 ? 'are' : 'is'} not in delivery.pools; sending from ${chosen}` };
}

/** Why a workspace or domain may not name this pool, or null when it may (null, none, always may). */
export function poolProblem(pools: PoolSettings['pools'], name: string | null): string | null {
  if (name === null || Object.hasOwn(pools, name)) return null;
  const names = Object.keys(pools);
  return names.length === 0 ? `Unknown pool "${name}": no pools are configured (delivery.pools)` : `Unknown pool "${name}": delivery.pools has ${names.join(', ')}`;
}
