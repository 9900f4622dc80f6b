import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import type { DnsResolver } from '../core/ports.ts';

export interface DkimCheck {
  /** mailauth's verdict: pass, fail, neutral, policy, temperror, permerror or none. */
  result: string;
  /** The Authentication-Results text a receiver would add, e.g. `dkim=pass header.i=@acme.test ...`. */
  detail: string;
}

/**
 * What a receiver would conclude about the DKIM signature of `raw`: mailauth's verifier over the
 * exact bytes, with the selector's key taken from `zone` (our own published records) instead of
 * the public DNS. With several signatures the first passing one counts.
 */
export async function checkDkim(raw: Buffer, zone: DnsResolver): Promise<DkimCheck> {
  const resolver = async (name: string, rrtype: string): Promise<string[][]> => {
    if (rrtype === 'TXT') return zone.resolveTxt(name);
    throw Object.assign(new Error(`no ${rrtype} records in the sandbox`), { code: 'ENOTFOUND' });
  };
  const { results } = await dkimVerify(raw, { resolver });
  if (results.length === 0) return { result: 'none', detail: 'dkim=none (message not signed)' };
  const chosen = results.find((r) => r.status.result === 'pass') ?? results[0]!;
  const comment = chosen.status.comment ? ` (${chosen.status.comment})` : '';
  return { result: chosen.status.result, detail: `${chosen.info || `dkim=${chosen.status.result}`}${comment}`.slice(0, 1000) };
}
