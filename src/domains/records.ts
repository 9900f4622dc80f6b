import { dkimTxtRecord, type DkimAlgorithm } from '../dkim/keys.ts';

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
  /** A DKIM record's key: its selector. */
  selector?: string;
}

/** A DKIM key as its record shows it. */
export interface PublishedKey {
  selector: string;
  algorithm: DkimAlgorithm;
  publicKey: string;
  required: boolean;
}

const DOMAIN_PATTERN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/;

export function normaliseDomainName(input: string): string | null {
  const name = input.trim().toLowerCase().replace(/\.$/, '');
  return DOMAIN_PATTERN.test(name) ? name : null;
}

export const returnPathHost = (domain: string): string => `bounces.${domain}`;

/**
 * The domain of a message's envelope sender: `bounces.<domain>` once that domain's
 * return_path record verified (SPF then aligns for DMARC), else the global one.
 */
export function returnPathDomain(domain: { name: string; return_path_verified: boolean }, globalDomain: string): string {
  return domain.return_path_verified ? returnPathHost(domain.name) : globalDomain;
}

/** One DKIM record per published key (SPEC §13: pending, active and retiring keys), then the others. */
export function domainRecords(input: { domain: string; keys: PublishedKey[]; serverHostname: string; inbound?: boolean }): DnsRecordSpec[] {
  const { domain, keys, serverHostname } = input;
  const bounces = returnPathHost(domain);
  const records: DnsRecordSpec[] = [
    ...keys.map((key): DnsRecordSpec => ({
      type: 'TXT',
      name: `${key.selector}._domainkey.${domain}`,
      value: dkimTxtRecord(key.publicKey, key.algorithm),
      purpose: 'dkim',
      required: key.required,
      selector: key.selector,
    })),
    { type: 'MX', name: bounces, value: serverHostname, priority: 10, purpose: 'return_path', required: false },
    { type: 'TXT', name: bounces, value: `v=spf1 a:${serverHostname} -all`, purpose: 'spf', required: false },
    // p=none is the safe first step; operators tighten it once reports look clean.
    { type: 'TXT', name: `_dmarc.${domain}`, value: `v=DMARC1; p=none`, purpose: 'dmarc', required: false },
  ];
  // A receiving domain (SPEC §14): its mail comes here.
  if (input.inbound) records.push({ type: 'MX', name: domain, value: serverHostname, priority: 10, purpose: 'inbound', required: true });
  return records;
}
