import { dkimTxtRecord } from '../dkim/keys.ts';

/** The DNS records a sending domain publishes, as pure data. */

export type RecordPurpose = 'dkim' | 'return_path' | 'spf' | 'dmarc' | 'inbound';

export interface DnsRecordSpec {
  type: 'TXT' | 'MX';
  /** Full name without a trailing dot. */
  name: string;
  /** TXT: the whole text, unquoted; MX: the host. */
  value: string;
  priority?: number;
  purpose: RecordPurpose;
  /** Required records prove ownership; the domain is verified when all of them match. */
  required: boolean;
}

const DOMAIN_PATTERN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/;

export function normaliseDomainName(input: string): string | null {
  const name = input.trim().toLowerCase().replace(/\.$/, '');
  return DOMAIN_PATTERN.test(name) ? name : null;
}

/** A new selector per key generation, so a rotated key can be published beside the old one. */
export function selectorFor(nowMs: number): string {
  const d = new Date(nowMs);
  return `mailsvc${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

export const returnPathHost = (domain: string): string => `bounces.${domain}`;

/**
 * The domain of a message's envelope sender: `bounces.<domain>` once that domain's
 * return_path record verified (SPF then aligns for DMARC), else the global one.
 */
export function returnPathDomain(domain: { name: string; return_path_verified: boolean }, globalDomain: string): string {
  return domain.return_path_verified ? returnPathHost(domain.name) : globalDomain;
}

export function domainRecords(input: { domain: string; selector: string; dkimPublicKey: string; serverHostname: string; inbound?: boolean }): DnsRecordSpec[] {
  const { domain, selector, dkimPublicKey, serverHostname } = input;
  const bounces = returnPathHost(domain);
  const records: DnsRecordSpec[] = [
    { type: 'TXT', name: `${selector}._domainkey.${domain}`, value: dkimTxtRecord(dkimPublicKey), purpose: 'dkim', required: true },
    { type: 'MX', name: bounces, value: serverHostname, priority: 10, purpose: 'return_path', required: false },
    { type: 'TXT', name: bounces, value: `v=spf1 a:${serverHostname} -all`, purpose: 'spf', required: false },
    // p=none is the safe first step; operators tighten it once reports look clean.
    { type: 'TXT', name: `_dmarc.${domain}`, value: `v=DMARC1; p=none`, purpose: 'dmarc', required: false },
  ];
  // A receiving domain (SPEC §14): its mail comes here. Last, so the checks stored by position
  // before it was switched on still line up.
  if (input.inbound) records.push({ type: 'MX', name: domain, value: serverHostname, priority: 10, purpose: 'inbound', required: true });
  return records;
}
