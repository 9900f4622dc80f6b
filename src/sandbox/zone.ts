import { DnsError, type DnsResolver } from '../core/ports.ts';
import { recordKeys } from '../domains/keys.ts';
import { domainRecords, type DnsRecordSpec } from '../domains/records.ts';
import type { Conn } from '../store/db.ts';
import { dkimKeysRepo } from '../store/dkim-keys.ts';
import { domainsRepo } from '../store/domains.ts';

/**
 * The records our domains table says each domain publishes, answered as DNS would answer them
 * once published: each published key's `<selector>._domainkey.D` and `_dmarc.D` TXT, `bounces.D` MX and TXT, a receiving domain's own MX. Names
 * of no domain of ours are NXDOMAIN; other types of a name we know are NODATA.
 */
export function ownZone(db: Conn, serverHostname: string): DnsResolver {
  async function lookup(name: string, type: DnsRecordSpec['type']): Promise<DnsRecordSpec[]> {
    const wanted = name.toLowerCase().replace(/\.$/, '');
    const labels = wanted.split('.');
    let known = false;
    // The record names are the domain itself (a receiving domain's MX), or sit one (bounces.,
    // _dmarc.) or two (<selector>._domainkey.) labels below it.
    for (const depth of [0, 1, 2]) {
      const row = await domainsRepo.byName(db, labels.slice(depth).join('.'));
      if (!row) continue;
      const keys = recordKeys(await dkimKeysRepo.byDomain(db, row.id));
      const records = domainRecords({ domain: row.name, keys, serverHostname, inbound: row.inbound });
      const named = records.filter((r) => r.name === wanted);
      known ||= named.length > 0;
      const found = named.filter((r) => r.type === type);
      if (found.length > 0) return found;
    }
    throw new DnsError(known ? 'nodata' : 'nxdomain', wanted, known ? 'ENODATA' : 'ENOTFOUND');
  }
  const none = (name: string): Promise<never> => Promise.reject(new DnsError('nodata', name, 'ENODATA'));
  return {
    resolveTxt: async (name) => (await lookup(name, 'TXT')).map((r) => [r.value]),
    resolveMx: async (name) => (await lookup(name, 'MX')).map((r) => ({ exchange: r.value, priority: r.priority ?? 10 })),
    resolve4: none,
    resolve6: none,
  };
}

/** RFC 6761 §6.2: `.test` is reserved for testing and never exists in the public DNS. */
export const isTestName = (name: string): boolean => /(?:^|\.)test\.?$/i.test(name);

/**
 * The resolver of sandbox mode: names under `.test` are answered from our own records, as if
 * they had been published; every other name still goes to the real resolver.
 */
export function sandboxResolver(real: DnsResolver, own: DnsResolver): DnsResolver {
  const pick = (name: string) => (isTestName(name) ? own : real);
  return {
    resolveTxt: (name) => pick(name).resolveTxt(name),
    resolveMx: (name) => pick(name).resolveMx(name),
    resolve4: (name) => pick(name).resolve4(name),
    resolve6: (name) => pick(name).resolve6(name),
  };
}
