// The world of the shaping bench: four providers and fifty independent hosts on the loopback
// provider farm, each enforcing a known rate and number of connections, the shaping config that
// tells mailsvc the same limits, and the recipients of a run spread over the 200 domains in
// proportion to what each may take.

import { startTestDns, type TestDns } from '../../test/helpers/dns-server.ts';
import { DEFAULT_RATE_LIMITED } from '../../test/helpers/farm-provider.ts';
import { independentHosts, startProviderFarm, type FarmProviderSpec, type ProviderFarm } from '../../test/helpers/provider-farm.ts';

export interface ProviderPlan {
  name: string;
  /** Messages a minute, enforced by the sink over any sliding 60 s and configured in mailsvc. */
  perMinute: number;
  /** Connections at once, enforced at the greeting and configured in mailsvc. */
  connections: number;
  domains: string[];
  /**
   * `shared`: every domain lists the provider's two MX hosts, as Google Workspace domains list
   * aspmx.l.google.com; `per-domain`: each domain has an MX host of its own under the provider's
   * suffix, as Microsoft 365 tenants do (`<tenant>.mail.protection.outlook.com`).
   */
  mx: 'shared' | 'per-domain';
  /** What its sink answers at RCPT beyond the rate: the provider's own throttling reply, which a built-in rule knows. */
  rateReply: string;
}

const SUFFIX = 'farm.test';
const rateWindow = (limit: number, reply?: string) => ({ limit, windowMs: 60_000, reply });

/**
 * 150 recipient domains over four providers; the numbers differ so that each pacing interval
 * rounds differently. Their throttling replies are Gmail's (throttle), Yahoo's TSS04 (suspend),
 * Microsoft 365's 451 4.7.500 (suspend) and Outlook.com's RP-001 (throttle), as quoted in
 * src/shaping/reply-rules.ts.
 */
export const PROVIDERS: ProviderPlan[] = [
  { name: 'p1', perMinute: 4200, connections: 8, mx: 'shared', domains: domainsOf('p1', 38), rateReply: DEFAULT_RATE_LIMITED },
  {
    name: 'p2',
    perMinute: 3600,
    connections: 5,
    mx: 'shared',
    domains: domainsOf('p2', 37),
    rateReply: '421 4.7.0 [TSS04] Messages from 192.0.2.25 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1',
  },
  {
    name: 'p3',
    perMinute: 2400,
    connections: 5,
    mx: 'per-domain',
    domains: domainsOf('p3', 38),
    rateReply: '451 4.7.500 Server busy. Please try again later from [192.0.2.64]. (S77719)',
  },
  {
    name: 'p4',
    perMinute: 1800,
    connections: 3,
    mx: 'per-domain',
    domains: domainsOf('p4', 37),
    rateReply:
      "421 RP-001 (COL0-MC1-F12) Unfortunately, some messages from 192.0.2.177 weren't sent. Please try again. We have limits for how many messages can be sent per hour and per day.",
  },
];
export const HOSTS = 50;
/** Each independent host's rate: mailsvc's `shaping.defaults.perMinute`, and what its sink enforces. */
export const HOST_PER_MINUTE = 120;
/** mailsvc's default `shaping.defaults.connections`, which each host's sink enforces too. */
export const HOST_CONNECTIONS = 10;

/** The sum of every destination's limit, messages a minute: the most any sender may deliver. */
export const LIMITS_PER_MINUTE = PROVIDERS.reduce((sum, p) => sum + p.perMinute, 0) + HOSTS * HOST_PER_MINUTE;

function domainsOf(provider: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${provider}-d${i + 1}.example`);
}

/** The MX host of a per-domain provider's domain: `p3-d5-example.mail.p3.farm.test`. */
const ownMx = (provider: ProviderPlan, domain: string) => `${domain.replaceAll('.', '-')}.mail.${provider.name}.${SUFFIX}`;

/**
 * The shaping config of a run. Shaped: each provider's MX suffix as a rule with its limits, and
 * the hosts' rate as the default. Unshaped: nothing configured, so every domain is the group of
 * its first MX host with the default 10 connections and no rate (the built-in reply rules stay).
 */
export function shapingConfig(shaped: boolean): Record<string, unknown> {
  if (!shaped) return {};
  return {
    defaults: { perMinute: HOST_PER_MINUTE },
    providers: PROVIDERS.map((p) => ({ name: p.name, mx: [`${p.name}.${SUFFIX}`], connections: p.connections, perMinute: p.perMinute })),
  };
}

function farmSpecs(): FarmProviderSpec[] {
  const providers = PROVIDERS.map((p, i): FarmProviderSpec => ({
    name: p.name,
    address: `127.0.0.${i + 2}`,
    mxHosts: p.mx === 'shared' ? [`mx1.${p.name}.${SUFFIX}`, `mx2.${p.name}.${SUFFIX}`] : p.domains.map((d) => ownMx(p, d)),
    domains: p.domains,
    maxConnections: p.connections,
    perMinute: rateWindow(p.perMinute, p.rateReply),
  }));
  // A host's reply beyond its rate is the farm's default, Gmail's wording.
  const hosts = independentHosts(HOSTS, { maxConnections: HOST_CONNECTIONS, perMinute: rateWindow(HOST_PER_MINUTE) });
  return [...providers, ...hosts];
}

export interface Farm {
  dns: TestDns;
  farm: ProviderFarm;
  close(): Promise<void>;
}

/** A DNS server and the farm behind it, every sink with fresh counters. */
export async function startFarm(): Promise<Farm> {
  const dns = await startTestDns();
  try {
    const farm = await startProviderFarm({ dns, providers: farmSpecs() });
    // The farm gives every domain all its provider's MX hosts; a per-domain provider's domain lists its own.
    for (const p of PROVIDERS) if (p.mx === 'per-domain') for (const d of p.domains) dns.set(d, 'MX', { exchange: ownMx(p, d), priority: 10 });
    return {
      dns,
      farm,
      close: async () => {
        await farm.close();
        await dns.close();
      },
    };
  } catch (err) {
    await dns.close();
    throw err;
  }
}

/**
 * `total` recipient addresses, each domain's count in proportion to its share of the limits
 * (a provider's rate split over its domains, a host's own rate; largest remainders), and
 * interleaved so that every stretch of the queue holds each domain in that proportion: the
 * claim, oldest first, then meets every destination at the rate it may be sent, and all of
 * them finish together.
 */
export function recipients(total: number): string[] {
  const shares = [
    ...PROVIDERS.flatMap((p) => p.domains.map((domain) => ({ domain, perMinute: p.perMinute / p.domains.length }))),
    ...independentHosts(HOSTS).map((h) => ({ domain: h.domains[0]!, perMinute: HOST_PER_MINUTE })),
  ];
  const exact = shares.map((s) => (total * s.perMinute) / LIMITS_PER_MINUTE);
  const counts = exact.map(Math.floor);
  const byRemainder = exact.map((x, i) => ({ i, rest: x - Math.floor(x) })).sort((a, b) => b.rest - a.rest || a.i - b.i);
  for (let k = 0, left = total - counts.reduce((a, b) => a + b, 0); k < left; k++) counts[byRemainder[k]!.i]!++;
  const placed: { at: number; address: string }[] = [];
  let n = 0;
  shares.forEach((s, i) => {
    // Each domain's first message at its own offset (golden-ratio steps), or the domains of one
    // provider, having equal counts, would queue in blocks of one provider at a time.
    const offset = (i * 0.618034) % 1;
    for (let k = 0; k < counts[i]!; k++) placed.push({ at: (k + offset) / counts[i]!, address: `u${n++}@${s.domain}` });
  });
  return placed.sort((a, b) => a.at - b.at).map((p) => p.address);
}

/** The farm sink that receives mail for `address`: its provider's name, or `hostK`. */
export function sinkOf(address: string): string {
  const domain = address.slice(address.lastIndexOf('@') + 1);
  const host = /^(host\d+)\.test$/.exec(domain);
  return host ? host[1]! : domain.slice(0, domain.indexOf('-'));
}
