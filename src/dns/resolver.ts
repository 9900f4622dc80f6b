import { Resolver } from 'node:dns/promises';
import { DnsError, type DnsFailureKind, type DnsResolver } from '../core/ports.ts';

function failureKind(code: string): DnsFailureKind {
  if (code === 'ENOTFOUND') return 'nxdomain';
  if (code === 'ENODATA') return 'nodata';
  return 'temporary';
}

/**
 * A resolver that asks `servers` (e.g. `["127.0.0.1:5353"]`), or the system's when empty.
 * Each query gets `timeoutMs` per try and two tries; c-ares reports NXDOMAIN as ENOTFOUND and
 * an empty answer as ENODATA, everything else (SERVFAIL, REFUSED, timeouts) is temporary.
 */
export function createDnsResolver(servers: string[], timeoutMs = 5000): DnsResolver {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 2 });
  if (servers.length > 0) resolver.setServers(servers);

  async function ask<T>(name: string, lookup: () => Promise<T>): Promise<T> {
    try {
      return await lookup();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
      throw new DnsError(failureKind(code), name, code);
    }
  }

  return {
    resolveMx: (name) => ask(name, () => resolver.resolveMx(name)),
    resolveTxt: (name) => ask(name, () => resolver.resolveTxt(name)),
    resolve4: (name) => ask(name, () => resolver.resolve4(name)),
    resolve6: (name) => ask(name, () => resolver.resolve6(name)),
  };
}
