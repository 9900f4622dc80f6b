import { iso, isoOrNull } from '../core/time.ts';
import { dkimTxtRecord, type DkimAlgorithm } from '../dkim/keys.ts';
import type { DkimKeyRow, DkimKeyStatus } from '../store/dkim-keys.ts';
import type { PublishedKey } from './records.ts';

/**
 * The rules of a domain's DKIM keys (SPEC §13), as pure functions of its key list and the time.
 *
 * - A key signs only while `active`: its record was verified in DNS.
 * - A rotation's new key is `pending` until its record verifies; meanwhile the key it replaces
 *   keeps signing. When it verifies it becomes `active` and, in the same step, the replaced key
 *   `retiring`: it no longer signs but stays published (its record stays in the domain's records)
 *   until `retire_after` (the verification time plus the overlap), so mail signed with it just
 *   before still verifies at receivers that check late. Then it is `retired` and its record may
 *   be removed.
 * - The activation is stored before the retirement, so at every moment at least one key of the
 *   algorithm signs: no message leaves unsigned, and every signature made was made with a key
 *   whose record is published.
 * - Dual signing: an active RSA key and an active Ed25519 key both sign, RSA first.
 */

export const DEFAULT_OVERLAP_DAYS = 7;
export const DAY_MS = 86_400_000;

const ORDER: Record<DkimAlgorithm, number> = { 'rsa-sha256': 0, 'ed25519-sha256': 1 };

/** The keys that sign, RSA first; at most one per algorithm, as `add` and `rotate` keep it. */
export function signingKeys<K extends Pick<DkimKeyRow, 'status' | 'algorithm' | 'id'>>(keys: K[]): K[] {
  return keys.filter((k) => k.status === 'active').sort((a, b) => ORDER[a.algorithm] - ORDER[b.algorithm] || b.id - a.id);
}

/** The keys whose records the domain publishes: all but the retired ones. */
export const publishedKeys = <K extends Pick<DkimKeyRow, 'status'>>(keys: K[]): K[] => keys.filter((k) => k.status !== 'retired');

/**
 * Whether a key's record is required for the domain to be verified: an active key's always; a
 * pending key's only while the domain has no active key (its first key). A rotation's pending key
 * or an added second algorithm is verified on its own, without taking the domain's status with it.
 */
export function keyRequired(key: Pick<DkimKeyRow, 'status'>, keys: Pick<DkimKeyRow, 'status'>[]): boolean {
  if (key.status === 'active') return true;
  return key.status === 'pending' && !keys.some((k) => k.status === 'active');
}

export interface KeyChange {
  id: number;
  patch: Partial<Pick<DkimKeyRow, 'status' | 'verified_at' | 'retire_after' | 'retired_at'>>;
}

/**
 * What verifying the records does to the keys: each pending key whose record matched becomes
 * active, and the key it replaces (if still active) retiring until `now + overlap`. Activations
 * come first in the list, so applying it in order never leaves an algorithm without a signer.
 */
export function afterVerification(keys: DkimKeyRow[], matched: Set<number>, now: number): KeyChange[] {
  const activated = keys.filter((k) => k.status === 'pending' && matched.has(k.id));
  const retiring: KeyChange[] = [];
  for (const key of activated) {
    const old = keys.find((k) => k.id === key.replaces_key_id && k.status === 'active');
    if (old) retiring.push({ id: old.id, patch: { status: 'retiring', retire_after: now + (key.overlap_ms ?? DEFAULT_OVERLAP_DAYS * DAY_MS) } });
  }
  return [...activated.map((k) => ({ id: k.id, patch: { status: 'active' as DkimKeyStatus, verified_at: now } })), ...retiring];
}

/**
 * The key the domain's own `selector` (and its legacy key columns) show: the newest signing RSA
 * key, else the newest signing key, else the oldest pending one.
 */
export function primaryKey(keys: DkimKeyRow[]): DkimKeyRow | undefined {
  const signing = signingKeys(keys);
  return signing.find((k) => k.algorithm === 'rsa-sha256') ?? signing[0] ?? keys.find((k) => k.status === 'pending');
}

/** `mailsvcYYYYMM` (an `e` after it for Ed25519), with `-2`, `-3`... when the domain has it already. */
export function newSelector(nowMs: number, algorithm: DkimAlgorithm, taken: string[]): string {
  const d = new Date(nowMs);
  const base = `mailsvc${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}${algorithm === 'ed25519-sha256' ? 'e' : ''}`;
  if (!taken.includes(base)) return base;
  for (let n = 2; ; n++) if (!taken.includes(`${base}-${n}`)) return `${base}-${n}`;
}

/** `rsa`/`ed25519` (the CLI's and the API's names) or the full algorithm name. */
export function parseAlgorithm(input: string): DkimAlgorithm | null {
  const name = input.trim().toLowerCase();
  if (name === 'rsa' || name === 'rsa-sha256') return 'rsa-sha256';
  if (name === 'ed25519' || name === 'ed25519-sha256') return 'ed25519-sha256';
  return null;
}

/** The published keys as their records show them, for `domainRecords`. */
export function recordKeys(keys: DkimKeyRow[]): PublishedKey[] {
  return publishedKeys(keys).map((k) => ({ selector: k.selector, algorithm: k.algorithm, publicKey: k.public_key, required: keyRequired(k, keys) }));
}

/** A key as the API and the CLI show it, with the record that publishes it. */
export type DkimKeyView = ReturnType<typeof keyView>;

export function keyView(key: DkimKeyRow, domain: string) {
  return {
    id: key.id,
    selector: key.selector,
    algorithm: key.algorithm,
    status: key.status,
    record: { type: 'TXT' as const, name: `${key.selector}._domainkey.${domain}`, value: dkimTxtRecord(key.public_key, key.algorithm) },
    replaces_key_id: key.replaces_key_id,
    created_at: iso(key.created_at),
    verified_at: isoOrNull(key.verified_at),
    retire_after: isoOrNull(key.retire_after),
    retired_at: isoOrNull(key.retired_at),
  };
}
