import { DnsError, type DnsResolver, type MxRecord, type RandomSource } from '../core/ports.ts';

export type PermanentDestinationStatus = '5.1.10' | '5.1.2' | '5.4.6';

export type Destination =
  | { kind: 'hosts'; hosts: string[]; implicit: boolean }
  | { kind: 'permanent'; status: PermanentDestinationStatus; message: string }
  | { kind: 'temporary'; message: string };

export interface DestinationDeps {
  dns: DnsResolver;
  random: RandomSource;
  /** Names that are this server: its hostname and the return-path domains. */
  ownDomains: string[];
}

function normalise(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, '');
}

/** Fisher–Yates within one preference, so equal MX hosts share the load (RFC 5321 §5.1). */
function shuffle<T>(items: T[], random: RandomSource): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.min(i, Math.floor(random() * (i + 1)));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function orderByPreference(records: MxRecord[], random: RandomSource): MxRecord[] {
  const groups = new Map<number, MxRecord[]>();
  for (const record of records) {
    const group = groups.get(record.priority) ?? [];
    group.push(record);
    groups.set(record.priority, group);
  }
  return [...groups.keys()].sort((a, b) => a - b).flatMap((priority) => shuffle(groups.get(priority)!, random));
}

function temporary(what: string, err: unknown): Destination {
  const reason = err instanceof DnsError ? err.code : err instanceof Error ? err.message : String(err);
  return { kind: 'temporary', message: `DNS lookup of ${what} failed temporarily (${reason})` };
}

function loop(domain: string): Destination {
  // Postfix's wording for the same refusal; 5.4.6 is "routing loop detected" (RFC 3463).
  return { kind: 'permanent', status: '5.4.6', message: `mail for ${domain} loops back to myself` };
}

/** Whether the name has an A or AAAA record, or the error that kept us from knowing. */
async function hasAddress(domain: string, dns: DnsResolver): Promise<boolean | DnsError | Error> {
  const lookups = await Promise.allSettled([dns.resolve4(domain), dns.resolve6(domain)]);
  if (lookups.some((lookup) => lookup.status === 'fulfilled' && lookup.value.length > 0)) return true;
  for (const lookup of lookups) {
    if (lookup.status === 'rejected') {
      const err: unknown = lookup.reason;
      if (!(err instanceof DnsError)) return err instanceof Error ? err : new Error(String(err));
      if (err.kind === 'temporary') return err;
    }
  }
  return false;
}

/**
 * Where mail for `domain` goes, following RFC 5321 §5.1: MX hosts by preference; without MX
 * records the domain itself when it has an address (implicit MX); a null MX (RFC 7505) or a
 * missing domain is a permanent failure; anything the DNS could not answer now is temporary,
 * never a bounce. Hosts that are ourselves, and every host of a worse preference than ours, are
 * dropped the way Postfix does it, so a misconfigured MX cannot make us mail ourselves.
 */
export async function resolveDestination(domainInput: string, deps: DestinationDeps): Promise<Destination> {
  const domain = normalise(domainInput);
  const own = new Set(deps.ownDomains.map(normalise));
  if (own.has(domain)) return loop(domain);

  let records: MxRecord[];
  try {
    records = await deps.dns.resolveMx(domain);
  } catch (err) {
    if (!(err instanceof DnsError)) return temporary(`MX for ${domain}`, err);
    if (err.kind === 'nxdomain') {
      return { kind: 'permanent', status: '5.1.2', message: `Domain ${domain} does not exist (NXDOMAIN)` };
    }
    if (err.kind === 'temporary') return temporary(`MX for ${domain}`, err);
    records = [];
  }

  const named = records.map((record) => ({ exchange: normalise(record.exchange), priority: record.priority })).filter((record) => record.exchange !== '');
  if (records.length > 0 && named.length === 0) {
    return {
      kind: 'permanent',
      status: '5.1.10',
      message: `Domain ${domain} does not accept mail (null MX, RFC 7505)`,
    };
  }

  if (named.length === 0) {
    const address = await hasAddress(domain, deps.dns);
    if (address === true) return { kind: 'hosts', hosts: [domain], implicit: true };
    if (address !== false) return temporary(`A/AAAA for ${domain}`, address);
    return {
      kind: 'permanent',
      status: '5.1.2',
      message: `Domain ${domain} has no MX and no address records`,
    };
  }

  const ourBest = Math.min(...named.filter((record) => own.has(record.exchange)).map((record) => record.priority));
  const usable = named.filter((record) => record.priority < ourBest);
  if (usable.length === 0) return loop(domain);

  const hosts: string[] = [];
  for (const record of orderByPreference(usable, deps.random)) {
    if (!hosts.includes(record.exchange)) hosts.push(record.exchange);
  }
  return { kind: 'hosts', hosts, implicit: false };
}
