/**
 * MTA-STS (RFC 8461) as text: the `_mta-sts` TXT record, the policy file and its MX patterns.
 * Pure: the fetching and caching are `mta-sts.ts`'s.
 */

export type StsMode = 'enforce' | 'testing' | 'none';

export interface StsPolicy {
  mode: StsMode;
  /** Lower-case patterns, a leading `*.` standing for one label (RFC 8461 §4.1). */
  mx: string[];
  /** Seconds the policy may be cached (at most 31557600, RFC 8461 §3.2). */
  maxAge: number;
}

/** RFC 8461 §3.3 suggests senders cap the policy body at 64 KB. */
export const MAX_POLICY_BYTES = 64 * 1024;

/** RFC 8461 §3.2: max_age is at most a year (31557600 s). */
const MAX_AGE_LIMIT = 31_557_600;

/** Longer than any real record: TXT strings are at most 255 octets and a record rarely has two. */
const MAX_RECORD_CHARS = 1024;

/** `id` is 1 to 32 letters and digits (RFC 8461 §3.1). */
const ID = /^[A-Za-z0-9]{1,32}$/;

/**
 * The policy id the `_mta-sts.<domain>` TXT record announces, or why there is none. The strings
 * of one record are joined (RFC 7208 style); records that do not start with `v=STSv1` are not
 * ours; more than one STS record means no policy (RFC 8461 §3.1).
 */
export function parseStsRecord(records: string[][]): { id: string } | { none: string } {
  const sts = records.map((parts) => parts.join('')).filter((text) => /^v=STSv1\s*(;|$)/.test(text));
  if (sts.length === 0) return { none: 'no v=STSv1 TXT record' };
  if (sts.length > 1) return { none: `${sts.length} v=STSv1 TXT records (RFC 8461 §3.1 allows one)` };
  const text = sts[0]!;
  if (text.length > MAX_RECORD_CHARS) return { none: `the TXT record is longer than ${MAX_RECORD_CHARS} characters` };
  let id: string | null = null;
  for (const field of text.split(';')) {
    const eq = field.indexOf('=');
    if (eq < 0) continue;
    const key = field.slice(0, eq).trim();
    const value = field.slice(eq + 1).trim();
    if (key === 'id') id = value;
  }
  if (id === null) return { none: 'the TXT record has no id' };
  if (!ID.test(id)) return { none: `the TXT record's id ${JSON.stringify(id.slice(0, 40))} is not 1 to 32 letters and digits` };
  return { id };
}

/**
 * The policy file (RFC 8461 §3.2): `key: value` lines separated by LF or CRLF, `version: STSv1`,
 * `mode`, `max_age`, and `mx` (one or more, unless the mode is `none`). Unknown keys are ignored;
 * a key given twice (other than `mx`) keeps its first value. One pass over the text, which the
 * fetcher has already capped at `MAX_POLICY_BYTES`.
 */
export function parseStsPolicy(text: string): StsPolicy | { invalid: string } {
  if (text.length > MAX_POLICY_BYTES) return { invalid: `the policy is larger than ${MAX_POLICY_BYTES} bytes` };
  const fields = new Map<string, string>();
  const mx: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const key = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (key === 'mx') mx.push(value.toLowerCase().replace(/\.$/, ''));
    else if (!fields.has(key)) fields.set(key, value);
  }
  if (fields.get('version') !== 'STSv1') return { invalid: 'the policy has no "version: STSv1" line' };
  const mode = fields.get('mode');
  if (mode !== 'enforce' && mode !== 'testing' && mode !== 'none') return { invalid: `the policy's mode ${JSON.stringify(mode ?? '')} is not enforce, testing or none` };
  const age = fields.get('max_age') ?? '';
  if (!/^[0-9]{1,10}$/.test(age)) return { invalid: `the policy's max_age ${JSON.stringify(age)} is not a whole number of seconds` };
  if (mode !== 'none' && mx.length === 0) return { invalid: `the policy in mode ${mode} names no mx` };
  const bad = mx.find((pattern) => !/^(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(pattern));
  if (bad !== undefined) return { invalid: `the policy's mx ${JSON.stringify(bad.slice(0, 80))} is not a host name or *.pattern` };
  return { mode, mx, maxAge: Math.min(Number(age), MAX_AGE_LIMIT) };
}

/**
 * Whether an MX host is named by a pattern (RFC 8461 §4.1): an exact match, or `*.example.com`
 * matching a single leftmost label (`mx.example.com`, not `a.mx.example.com` nor `example.com`).
 */
export function mxMatches(host: string, patterns: readonly string[]): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  for (const pattern of patterns) {
    if (pattern.startsWith('*.')) {
      const dot = name.indexOf('.');
      if (dot > 0 && name.slice(dot + 1) === pattern.slice(2)) return true;
    } else if (name === pattern) return true;
  }
  return false;
}
