import { lookup as systemLookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { invalid } from '../core/errors.ts';
import type { DnsResolver } from '../core/ports.ts';

/**
 * Where a webhook may point unless `webhooks.allowPrivateAddresses`: global unicast addresses
 * only, an allow-list, so a range nobody thought of is refused rather than reached. IPv4: all
 * but the ranges the IANA special-purpose registry (RFC 6890 and its updates) marks as not
 * globally reachable, and multicast, reserved and broadcast. IPv6: 2000::/3 but its special
 * blocks; an IPv6 address that carries an IPv4 one (mapped, NAT64, 6to4) is judged by that IPv4.
 */
const NOT_GLOBAL_V4 = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network": reaches the local machine
  ['10.0.0.0', 8], // private, RFC 1918
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT), RFC 6598
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, where cloud metadata services answer
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation, RFC 5737
  ['192.88.99.0', 24], // 6to4 relay anycast, deprecated by RFC 7526
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking, RFC 2544: often internal lab networks
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, with 255.255.255.255 broadcast
] as const) {
  NOT_GLOBAL_V4.addSubnet(net, bits, 'ipv4');
}

const GLOBAL_V6 = new BlockList();
GLOBAL_V6.addSubnet('2000::', 3, 'ipv6');
const NOT_GLOBAL_V6 = new BlockList();
for (const [net, bits] of [
  ['2001::', 23], // IETF protocol assignments: Teredo (an obfuscated IPv4 inside), ORCHID, benchmarking
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation, RFC 9637
] as const) {
  NOT_GLOBAL_V6.addSubnet(net, bits, 'ipv6');
}

/** The eight 16-bit groups of a valid IPv6 address (a trailing dotted quad included). */
function groups(ip: string): number[] {
  let text = ip.split('%')[0];
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const [a, b, c, d] = tail.split('.').map(Number);
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = rest ? rest.split(':') : [];
  const words = rest === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return words.map((w) => parseInt(w, 16));
}

const quad = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * The IPv4 address an IPv6 one reaches: IPv4-mapped (::ffff:0:0/96, which the socket layer
 * turns into that IPv4), NAT64 (64:ff9b::/96, RFC 6052) and 6to4 (2002::/16, RFC 3056).
 */
function embeddedIpv4(g: number[]): string | null {
  const zeros = (from: number, to: number) => g.slice(from, to).every((w) => w === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return quad(g[6], g[7]);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return quad(g[6], g[7]);
  if (g[0] === 0x2002) return quad(g[1], g[2]);
  return null;
}

/** Whether `ip` is a global unicast address, the only kind a webhook is sent to by default. */
export function isGlobalUnicast(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return !NOT_GLOBAL_V4.check(ip, 'ipv4');
  if (family !== 6) return false;
  const g = groups(ip);
  if (g.length !== 8 || g.some((w) => !(w >= 0 && w <= 0xffff))) return false;
  const v4 = embeddedIpv4(g);
  if (v4 !== null) return isGlobalUnicast(v4);
  const bare = ip.split('%')[0];
  return GLOBAL_V6.check(bare, 'ipv6') && !NOT_GLOBAL_V6.check(bare, 'ipv6');
}

/** Whether `ip` is this machine's loopback: 127.0.0.0/8, ::1, or 127.x mapped into IPv6. */
export function isLoopback(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return ip.startsWith('127.');
  if (family !== 6) return false;
  const g = groups(ip);
  if (g.length !== 8) return false;
  const v4 = embeddedIpv4(g);
  if (v4 !== null && g[5] === 0xffff) return v4.startsWith('127.');
  return g.slice(0, 7).every((w) => w === 0) && g[7] === 1;
}

/**
 * Which addresses webhooks may reach: `global` unicast only (live mode), `loopback` as well (the
 * sandbox, where the receiver under test runs on this machine; private networks stay refused),
 * or `any` (`webhooks.allowPrivateAddresses`).
 */
export type Reach = 'global' | 'loopback' | 'any';

export function webhookReach(config: { webhooks: { allowPrivateAddresses: boolean }; delivery: { mode: 'live' | 'sandbox' } }): Reach {
  if (config.webhooks.allowPrivateAddresses) return 'any';
  return config.delivery.mode === 'sandbox' ? 'loopback' : 'global';
}

export const isRefusedAddress = (ip: string, reach: Reach = 'global'): boolean => reach !== 'any' && !isGlobalUnicast(ip) && !(reach === 'loopback' && isLoopback(ip));

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
    if (name === 'localhost' || name.endsWith('.localhost'))
      return [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ];
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
  constructor(
    readonly host: string,
    readonly address: string,
    reach: Reach = 'global',
  ) {
    super(
      `${host} resolves to ${address}, not a global unicast address (loopback, private, link-local, shared, reserved, multicast and the like); webhooks are not sent there (webhooks.allowPrivateAddresses${reach === 'global' ? '; sandbox mode allows loopback' : ''})`,
    );
  }
}

/**
 * Characters the WHATWG URL parser rewrites or drops without a word (a backslash becomes a
 * slash, tabs and newlines vanish), so that other parsers read another host in the same text:
 * `http://203.0.113.1\@127.0.0.1/` is 203.0.113.1 to WHATWG and 127.0.0.1 to others.
 */
// eslint-disable-next-line no-control-regex -- control characters are exactly what it looks for
const AMBIGUOUS = /[\\\x00-\x20\x7f]/;

/**
 * A webhook URL: http or https, with a host, parsed once by the WHATWG parser; registration
 * stores its serialisation and the poster connects to its `hostname`, so the host checked is the
 * host reached.
 */
export function parseWebhookUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('Field `url` is not a valid URL');
  }
  if (AMBIGUOUS.test(raw)) throw invalid('Field `url` must not contain a backslash, a space or a control character');
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('Field `url` must be an http:// or https:// URL');
  if (!url.hostname) throw invalid('Field `url` has no host');
  return url;
}

/**
 * The check at registration: a URL whose host resolves to a refused address is refused. A name
 * that does not resolve yet is accepted; the check at each connect still applies.
 */
export async function checkUrlAtRegistration(raw: string, resolve: HostResolver, reach: Reach): Promise<string> {
  const url = parseWebhookUrl(raw);
  if (reach === 'any') return url.toString();
  const addresses = await resolve(url.hostname).catch(() => []);
  const refused = addresses.find((a) => isRefusedAddress(a.address, reach));
  if (refused) throw invalid(`Field \`url\`: ${new RefusedAddressError(url.hostname, refused.address, reach).message}`);
  return url.toString();
}

/**
 * The `lookup` of the dispatcher's HTTP agents: the address actually connected to is the one
 * checked, so a name that re-resolves to a private address after registration is still refused.
 */
export function policyLookup(resolve: HostResolver, reach: Reach): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
        const refused = wanted.find((a) => isRefusedAddress(a.address, reach));
        if (refused) return callback(new RefusedAddressError(hostname, refused.address, reach) as unknown as NodeJS.ErrnoException, '', 4);
        if (wanted.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 4);
        if (options.all) return (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, wanted);
        callback(null, wanted[0].address, wanted[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 4),
    );
  };
}
