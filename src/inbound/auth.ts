import { authenticate, type DNSResolver } from 'mailauth';
import type { DnsResolver } from '../core/ports.ts';

/** mailauth's verdicts for a received message: `pass`, `fail`, `softfail`, `neutral`, `none`, `temperror`, `permerror`, ... */
export interface AuthResults {
  spf: string;
  dkim: string;
  dmarc: string;
  arc: string;
}

export interface AuthInput {
  raw: Buffer;
  /** The connecting client's address. */
  ip: string;
  helo: string | null;
  /** The MAIL FROM address; empty for the null sender. */
  mailFrom: string;
  /** Our `server.hostname`, the MTA that checks. */
  hostname: string;
}

/**
 * mailauth's lookups through our resolver (`dns.servers`): TXT, MX, A and AAAA, which SPF,
 * DKIM, DMARC and ARC need; other types (PTR, for SPF's deprecated `ptr`) find nothing.
 */
export function mailauthResolver(dns: DnsResolver): DNSResolver {
  return (async (name: string, type: string) => {
    if (type === 'TXT') return dns.resolveTxt(name);
    if (type === 'MX') return dns.resolveMx(name);
    if (type === 'A') return dns.resolve4(name);
    if (type === 'AAAA') return dns.resolve6(name);
    throw Object.assign(new Error(`no ${type} lookups here`), { code: 'ENOTFOUND' });
  }) as DNSResolver;
}

/**
 * SPF for the connecting address and MAIL FROM (or HELO for the null sender), DKIM over the exact
 * bytes, DMARC of the From domain, and ARC (RFC 8617). A check that cannot run says `none`.
 */
export async function checkAuth(input: AuthInput, resolver: DNSResolver): Promise<AuthResults> {
  const r = await authenticate(input.raw, {
    ip: input.ip,
    helo: input.helo ?? undefined,
    sender: input.mailFrom || undefined,
    mta: input.hostname,
    resolver,
    disableBimi: true,
  });
  const dkim = r.dkim.results ?? [];
  return {
    spf: r.spf ? r.spf.status.result : 'none',
    // Several signatures: one that passes is enough, as DMARC reads them.
    dkim: dkim.length === 0 ? 'none' : (dkim.find((d) => d.status.result === 'pass') ?? dkim[0]!).status.result,
    dmarc: r.dmarc ? r.dmarc.status.result : 'none',
    arc: r.arc ? r.arc.status.result : 'none',
  };
}
