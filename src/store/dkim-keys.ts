import type { DkimAlgorithm } from '../dkim/keys.ts';
import { insertedId, type Conn } from './db.ts';

export type DkimKeyStatus = 'pending' | 'active' | 'retiring' | 'retired';

/** One DKIM key of a domain (SPEC §13); its TXT record sits at `<selector>._domainkey.<domain>`. */
export interface DkimKeyRow {
  id: number;
  domain_id: number;
  selector: string;
  algorithm: DkimAlgorithm;
  /** PKCS#8 PEM. */
  private_key: string;
  /** The TXT record's `p=` value. */
  public_key: string;
  /** pending: published, not verified, does not sign; active: signs; retiring: published, no longer signs; retired: may be unpublished. */
  status: DkimKeyStatus;
  /** A rotation's new key: the key it retires once verified, and how long (ms) that one stays published then. */
  replaces_key_id: number | null;
  overlap_ms: number | null;
  created_at: number;
  verified_at: number | null;
  /** A retiring key is retired from then on (ms since the epoch). */
  retire_after: number | null;
  retired_at: number | null;
}

export const dkimKeysRepo = {
  async insert(db: Conn, row: Omit<DkimKeyRow, 'id'>): Promise<DkimKeyRow> {
    const [inserted] = await db('dkim_keys').insert(row).returning('id');
    return { ...row, id: insertedId(inserted) };
  },
  /** Oldest first. */
  byDomain: (db: Conn, domainId: number): Promise<DkimKeyRow[]> => db('dkim_keys').where({ domain_id: domainId }).orderBy('id'),
  /** Every domain's keys, by domain id, oldest first. */
  async byDomains(db: Conn, domainIds: number[]): Promise<Map<number, DkimKeyRow[]>> {
    const out = new Map<number, DkimKeyRow[]>(domainIds.map((id) => [id, []]));
    if (domainIds.length === 0) return out;
    const rows: DkimKeyRow[] = await db('dkim_keys').whereIn('domain_id', domainIds).orderBy('id');
    for (const row of rows) out.get(row.domain_id)?.push(row);
    return out;
  },
  async update(db: Conn, id: number, patch: Partial<Omit<DkimKeyRow, 'id' | 'domain_id'>>): Promise<void> {
    await db('dkim_keys').where({ id }).update(patch);
  },
  /** Retiring keys whose overlap ended by `now` become retired (SPEC §13); returns how many. */
  retireDue: (db: Conn, domainIds: number[], now: number): Promise<number> =>
    db('dkim_keys').whereIn('domain_id', domainIds).where({ status: 'retiring' }).where('retire_after', '<=', now).update({ status: 'retired', retired_at: now }),
  async removeForDomain(db: Conn, domainId: number): Promise<void> {
    await db('dkim_keys').where({ domain_id: domainId }).delete();
  },
};
