import { lookup as systemLookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { invalid } from '../core/errors.ts';
import type { DnsResolver } from '../core/ports.ts';

/**
 * Where a webhook may not point unless `webhooks.allowPrivateAddresses`: loopback, RFC 1918
 * private, link-local (cloud metadata services live there), unique-local, and the unspecified
 * and "this network" addresses, which reach the local machine. IPv4-mapped IPv6 addresses are
 * checked against the IPv4 rules.
 */
const REFUSED = new BlockList();
for (const [net, bits] of [['0.0.0.0', 8], ['127.0.0.0', 8], ['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['169.254.0.0', 16]] as const) {
  REFUSED.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [['::', 128], ['::1', 128], ['fe80::', 10], ['fc00::', 7]] as const) REFUSED.addSubnet(net, bits, 'ipv6');

export function isRefusedAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 0) return true;
  return REFUSED.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to its addresses; IP literals resolve to themselves. */
export type HostResolver = (host: string) => Promise<ResolvedAddress[]>;

/**
 * Through the configured DNS servers when there are any (the same view delivery has), else the
 * system's resolver. `localhost` and its subdomains are loopback whatever DNS says.
 */
export function hostResolver(dns: DnsResolver, useConfiguredServers: boolean): HostResolver {
  return async (host) => {
    const bare = host.startsWith('[') ? host.slice(1, -1) : host;
    const family = isIP(bare);
    if (family !== 0) return [{ address: bare, family: family as 4 | 6 }];
    const name = bare.toLowerCase().replace(/\.$/, '');
    if (name === 'localhost' || name.endsWith('.localhost')) return [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }];
    if (!useConfiguredServers) {
      const found = await systemLookup(name, { all: true });
      return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
    }
    const [v4, v6] = await Promise.allSettled([dns.resolve4(name), dns.resolve6(name)]);
    const out: ResolvedAddress[] = [];
    if (v4.status === 'fulfilled') out.push(...v4.value.map((address) => ({ address, family: 4 as const })));
    if (v6.status === 'fulfilled') out.push(...v6.value.map((address) => ({ address, family: 6 as const })));
    if (out.length === 0) throw v4.status === 'rejected' ? v4.reason : new Error(`${name} has no address`);
    return out;
  };
}

export class RefusedAddressError extends Error {
  readonly code = 'EREFUSEDADDRESS';
  constructor(readonly host: string, readonly address: string) {
    super(`${host} resolves to ${address}, a loopback, private, link-local or unique-local address; webhooks are not sent there (webhooks.allowPrivateAddresses)`);
  }
}

/** A webhook URL: http or https, with a host, at most 2048 characters. */
export function parseWebhookUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('Field `url` is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('Field `url` must be an http:// or https:// URL');
  if (!url.hostname) throw invalid('Field `url` has no host');
  return url;
}

/**
 * The check at registration: a URL whose host resolves to a refused address is refused. A name
 * that does not resolve yet is accepted; the check at each connect still applies.
 */
export async function checkUrlAtRegistration(raw: string, resolve: HostResolver, allowPrivate: boolean): Promise<string> {
  const url = parseWebhookUrl(raw);
  if (allowPrivate) return url.toString();
  const addresses = await resolve(url.hostname).catch(() => []);
  const refused = addresses.find((a) => isRefusedAddress(a.address));
  if (refused) throw invalid(`Field \`url\`: ${new RefusedAddressError(url.hostname, refused.address).message}`);
  return url.toString();
}

/**
 * The `lookup` of the dispatcher's HTTP agents: the address actually connected to is the one
 * checked, so a name that re-resolves to a private address after registration is still refused.
 */
export function policyLookup(resolve: HostResolver, allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
        const refused = allowPrivate ? undefined : wanted.find((a) => isRefusedAddress(a.address));
        if (refused) return callback(new RefusedAddressError(hostname, refused.address) as unknown as NodeJS.ErrnoException, '', 4);
        if (wanted.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 4);
        if (options.all) return (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, wanted);
        callback(null, wanted[0].address, wanted[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 4),
    );
  };
}
