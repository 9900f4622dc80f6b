import { DnsError, type DnsResolver } from '../core/ports.ts';
import type { DnsRecordSpec } from './records.ts';

export interface RecordCheck {
  verified: boolean;
  /** Why it did not match, naming the record; null when verified. */
  problem: string | null;
}

/** RFC 6376 §3.6.1 tag list, e.g. `v=DKIM1; k=rsa; p=MIIB...`. */
function dkimTags(text: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of text.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) tags.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).replace(/\s+/g, ''));
  }
  return tags;
}

const squash = (s: string) => s.trim().replace(/\s+/g, ' ').toLowerCase();
const short = (s: string) => (s.length > 40 ? `${s.slice(0, 37)}...` : s);

function matchTxt(record: DnsRecordSpec, found: string[]): RecordCheck {
  const label = `${record.purpose}: TXT ${record.name}`;
  if (record.purpose === 'dkim') {
    const want = dkimTags(record.value).get('p');
    const keys = found.map((t) => dkimTags(t).get('p')).filter((p): p is string => p !== undefined);
    if (keys.includes(want!)) return { verified: true, problem: null };
    if (keys.length === 0) return { verified: false, problem: `${label} has no DKIM key (p=); expected "${short(record.value)}"` };
    return { verified: false, problem: `${label} publishes a different key (p=${short(keys[0])}); expected p=${short(want!)}` };
  }
  if (record.purpose === 'dmarc') {
    return found.some((t) => /^v=dmarc1\b/i.test(t.trim())) ? { verified: true, problem: null } : { verified: false, problem: `${label} has no v=DMARC1 record` };
  }
  if (found.some((t) => squash(t) === squash(record.value))) return { verified: true, problem: null };
  const spf = found.find((t) => /^v=spf1\b/i.test(t.trim()));
  return {
    verified: false,
    problem: spf ? `${label} is "${spf}"; expected "${record.value}"` : `${label} has no SPF record; expected "${record.value}"`,
  };
}

function lookupProblem(record: DnsRecordSpec, err: unknown): RecordCheck {
  const label = `${record.purpose}: ${record.type} ${record.name}`;
  if (err instanceof DnsError && err.kind !== 'temporary') return { verified: false, problem: `${label} not found` };
  return { verified: false, problem: `${label} could not be looked up (${(err as Error).message}); try again later` };
}

/** Looks every record up through the configured DNS servers. */
export async function checkRecords(records: DnsRecordSpec[], dns: DnsResolver): Promise<RecordCheck[]> {
  return Promise.all(
    records.map(async (record): Promise<RecordCheck> => {
      try {
        if (record.type === 'MX') {
          const mx = await dns.resolveMx(record.name);
          const want = record.value.toLowerCase();
          return mx.some((m) => m.exchange.toLowerCase().replace(/\.$/, '') === want)
            ? { verified: true, problem: null }
            : {
                verified: false,
                problem: `${record.purpose}: MX ${record.name} points to ${mx.map((m) => m.exchange).join(', ') || 'nothing'}; expected ${record.value}`,
              };
        }
        const txt = (await dns.resolveTxt(record.name)).map((chunks) => chunks.join(''));
        return matchTxt(record, txt);
      } catch (err) {
        return lookupProblem(record, err);
      }
    }),
  );
}
