import { DnsError, type DnsResolver } from '../core/ports.ts';
import type { DnsRecordSpec } from '../domains/records.ts';
import type { Finding } from './checks.ts';

// Sender compliance checks (SPEC §13, docs/COMPLIANCE.md): Google's and Yahoo's bulk-sender
// rules (2024) and Microsoft's (2025) ask for a DMARC record and for SPF or DKIM to pass
// *aligned* with the From domain (RFC 7489 §3.1). Each problem names the record to publish.

const ok = (check: string, detail: string): Finding => ({ check, status: 'ok', detail });
const problem = (check: string, detail: string, fix: string): Finding => ({ check, status: 'problem', detail, fix });
const skipped = (check: string, detail: string): Finding => ({ check, status: 'skipped', detail });

const lower = (name: string) => name.toLowerCase().replace(/\.$/, '');

/**
 * The organisational domain, approximated as the last two labels (RFC 7489 §3.2 asks for the
 * public suffix list, which we do not ship): `news.shop.example` → `shop.example`. Under a
 * two-label public suffix (`co.uk`) names compare as `co.uk` too, so relaxed alignment is then
 * judged too generously; strict alignment (`adkim=s`, `aspf=s`) compares whole names.
 */
export function organisationalDomain(name: string): string {
  return lower(name).split('.').slice(-2).join('.');
}

/** RFC 7489 §3.1: strict alignment wants the same name, relaxed the same organisational domain. */
export function aligned(a: string, b: string, mode: 'r' | 's'): boolean {
  return mode === 's' ? lower(a) === lower(b) : organisationalDomain(a) === organisationalDomain(b);
}

/** `v=DMARC1; p=none; adkim=s` → its tags, lowercased names. */
function tags(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of text.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim());
  }
  return out;
}

async function txt(dns: DnsResolver, name: string): Promise<string[] | null> {
  try {
    return (await dns.resolveTxt(name)).map((chunks) => chunks.join(''));
  } catch (err) {
    if (err instanceof DnsError && err.kind !== 'temporary') return null;
    throw err;
  }
}

/** The DMARC record that applies to `domain`: its own, else its organisational domain's (RFC 7489 §6.6.3). */
async function dmarcOf(dns: DnsResolver, domain: string): Promise<{ name: string; record: string } | null> {
  for (const name of [...new Set([`_dmarc.${domain}`, `_dmarc.${organisationalDomain(domain)}`])]) {
    const found = (await txt(dns, name))?.find((t) => /^v=dmarc1\s*(;|$)/i.test(t.trim()));
    if (found) return { name, record: found };
  }
  return null;
}

export interface SendingDomain {
  name: string;
  /** The records `domain show` lists (the DKIM key, the return path's MX and SPF, DMARC). */
  records: DnsRecordSpec[];
  /** Its own return path (`bounces.<name>`) verified: the envelope sender uses it. */
  returnPathVerified: boolean;
}

const recordText = (r: DnsRecordSpec) => `${r.type} ${r.name} ${r.priority !== undefined ? `${r.priority} ` : ''}"${r.value}"`;

/**
 * A verified sending domain's DMARC record and alignment. DKIM: we sign with `d=` the sending
 * domain, which is the From domain (a message's From must be a verified domain of its
 * workspace), so DKIM aligns whenever the selector's key is published. SPF: receivers check
 * the envelope sender's domain, which is `bounces.<domain>` once its return-path records
 * verified, else the server-wide `inbound.returnPathDomain`; that aligns (relaxed) only when it
 * shares the From domain's organisational domain.
 */
export async function checkAlignment(domain: SendingDomain, globalReturnPath: string, dns: DnsResolver): Promise<Finding[]> {
  const findings: Finding[] = [];
  const dmarcCheck = `DMARC ${domain.name}`;
  const dmarcRecord = domain.records.find((r) => r.purpose === 'dmarc');
  const dkimRecord = domain.records.find((r) => r.purpose === 'dkim')!;
  const rpRecords = domain.records.filter((r) => r.purpose === 'return_path' || r.purpose === 'spf');
  let dmarc: { name: string; record: string } | null;
  try {
    dmarc = await dmarcOf(dns, domain.name);
  } catch (err) {
    return [skipped(dmarcCheck, `could not look up _dmarc.${domain.name} (${(err as Error).message})`)];
  }
  if (!dmarc) {
    findings.push(
      problem(
        dmarcCheck,
        `no DMARC record at _dmarc.${domain.name}${organisationalDomain(domain.name) !== domain.name ? ` or _dmarc.${organisationalDomain(domain.name)}` : ''}: Gmail, Yahoo and Outlook.com refuse bulk mail without one`,
        `publish ${dmarcRecord ? recordText(dmarcRecord) : `TXT _dmarc.${domain.name} "v=DMARC1; p=none"`} (p=none first; tighten to quarantine or reject once the reports are clean)`,
      ),
    );
  } else findings.push(ok(dmarcCheck, `${dmarc.name}: ${dmarc.record}`));
  const t = dmarc ? tags(dmarc.record) : new Map<string, string>();
  const adkim = t.get('adkim')?.toLowerCase() === 's' ? 's' : 'r';
  const aspf = t.get('aspf')?.toLowerCase() === 's' ? 's' : 'r';

  // DKIM: d= is the From domain itself, so aligned in either mode if the key is published.
  const dkimCheck = `DKIM alignment ${domain.name}`;
  const keys = await txt(dns, dkimRecord.name).catch(() => null);
  const want = tags(dkimRecord.value).get('p')?.replace(/\s+/g, '');
  const published = keys?.some((k) => tags(k).get('p')?.replace(/\s+/g, '') === want) ?? false;
  findings.push(
    published
      ? ok(dkimCheck, `signed with d=${domain.name}, the From domain (${adkim === 's' ? 'strict' : 'relaxed'} alignment); the key at ${dkimRecord.name} matches`)
      : problem(
          dkimCheck,
          `mail is signed with d=${domain.name}, but ${dkimRecord.name} does not publish its key: DKIM fails, so it cannot align`,
          `publish ${recordText(dkimRecord)}`,
        ),
  );

  // SPF: through the envelope sender's (return-path) domain.
  const spfCheck = `SPF alignment ${domain.name}`;
  const returnPath = domain.returnPathVerified ? `bounces.${domain.name}` : globalReturnPath;
  const fixRp = `publish ${rpRecords.map(recordText).join(' and ')}, then run mailsvc domain verify ${domain.name}`;
  if (aligned(returnPath, domain.name, aspf)) {
    findings.push(ok(spfCheck, `the return path ${returnPath} aligns with the From domain ${domain.name} (${aspf === 's' ? 'strict' : 'relaxed'})`));
  } else if (aspf === 's') {
    findings.push(
      published
        ? ok(spfCheck, `aspf=s: the return path ${returnPath} can never equal ${domain.name}, so DMARC passes through DKIM alone`)
        : problem(spfCheck, `aspf=s: the return path ${returnPath} can never equal ${domain.name}, and DKIM does not pass either`, `publish ${recordText(dkimRecord)}`),
    );
  } else {
    findings.push(
      problem(
        spfCheck,
        `the envelope sender uses ${returnPath}, which does not align with the From domain ${domain.name}: SPF passes for ${returnPath} but not for DMARC${published ? ' (DMARC still passes through DKIM)' : ''}`,
        fixRp,
      ),
    );
  }
  return findings;
}

/**
 * An own domain's MTA-STS (RFC 8461 §3): when `_mta-sts.<domain>` is published it must be one
 * `v=STSv1; id=...` record, and the policy host `mta-sts.<domain>` must resolve (the policy is
 * served from https://mta-sts.<domain>/.well-known/mta-sts.txt; doctor does not fetch it).
 */
export async function checkMtaSts(domain: string, dns: DnsResolver): Promise<Finding> {
  const check = `MTA-STS ${domain}`;
  let records: string[] | null;
  try {
    records = await txt(dns, `_mta-sts.${domain}`);
  } catch (err) {
    return skipped(check, `could not look up _mta-sts.${domain} (${(err as Error).message})`);
  }
  const sts = (records ?? []).filter((r) => /^v=STSv1\s*(;|$)/.test(r.trim()));
  if (sts.length === 0) return skipped(check, `not published (optional: _mta-sts.${domain} has no v=STSv1 record)`);
  if (sts.length > 1)
    return problem(
      check,
      `_mta-sts.${domain} has ${sts.length} v=STSv1 records: senders then ignore the policy (RFC 8461 §3.1)`,
      `keep one: TXT _mta-sts.${domain} "v=STSv1; id=1" (raise the id whenever the policy changes)`,
    );
  if (!/^[A-Za-z0-9]{1,32}$/.test(tags(sts[0]!).get('id') ?? '')) {
    return problem(
      check,
      `_mta-sts.${domain} "${sts[0]}" has no valid id (1-32 letters and digits)`,
      `publish TXT _mta-sts.${domain} "v=STSv1; id=1" (raise the id whenever the policy changes)`,
    );
  }
  const host = `mta-sts.${domain}`;
  try {
    const addresses = [...(await dns.resolve4(host).catch(() => [])), ...(await dns.resolve6(host).catch(() => []))];
    if (addresses.length === 0) throw new Error('no A or AAAA record');
  } catch (err) {
    return problem(
      check,
      `_mta-sts.${domain} is published but the policy host ${host} does not resolve (${(err as Error).message})`,
      `publish an A record for ${host} and serve the policy at https://${host}/.well-known/mta-sts.txt, or remove _mta-sts.${domain}`,
    );
  }
  return ok(check, `${sts[0]}; the policy host ${host} resolves`);
}
