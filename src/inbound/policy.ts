import { verpRecipientId } from '../delivery/verp.ts';
import type { TokenCodec } from '../tokens/index.ts';
import type { Reply } from '../core/smtp-reply.ts';
import { REPLIES } from './replies.ts';

/**
 * Who the inbound listener takes mail for, as pure functions over the session: the
 * smtp-server adapter calls them and turns a refusal into its reply.
 */

/** What an accepted RCPT is for. */
export type InboundTarget =
  | { kind: 'verp'; address: string; recipientId: number }
  | { kind: 'unsubscribe'; address: string; recipientId: number }
  | { kind: 'fbl'; address: string }
  | { kind: 'postmaster'; address: string };

export type Decision<T> = { ok: true; value: T } | { ok: false; reply: Reply; reason: string };

export interface RecipientPolicy {
  /** Lowercased return-path domains: the global one and `bounces.<d>` of each verified domain. */
  returnPathDomains: ReadonlySet<string>;
  verp: TokenCodec;
  unsubscribe: TokenCodec;
  maxRecipients: number;
}

export interface SessionView {
  /** Recipients already accepted in this transaction. */
  accepted: number;
}

const refuse = (name: keyof typeof REPLIES): Decision<never> => ({ ok: false, reply: REPLIES[name], reason: name });

// Characters that route mail elsewhere or hide another address inside the local part:
// "%" (the percent hack), "!" (UUCP bang paths), "@" and ":" (source routes), quotes and
// backslashes (quoted local parts such as "victim@elsewhere"@bounces.example).
const ROUTING = /["%!@:\\\s<>(),;[\]]/;

/** Splits `local@domain`; null when the address is not a plain dot-atom address we could own. */
export function splitAddress(address: string): { local: string; domain: string } | 'routing' | null {
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return null;
  const local = address.slice(0, at);
  const domain = address
    .slice(at + 1)
    .toLowerCase()
    .replace(/\.$/, '');
  if (ROUTING.test(local) || address.startsWith('@')) return 'routing';
  if (!/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+$/.test(domain)) return null;
  return { local, domain };
}

const safeId = (id: bigint | null): number | null => (id !== null && id <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(id) : null);

export function checkRecipient(session: SessionView, address: string, policy: RecipientPolicy): Decision<InboundTarget> {
  if (session.accepted >= policy.maxRecipients) return refuse('tooManyRecipients');
  const parts = splitAddress(address);
  if (parts === 'routing') return refuse('routingRefused');
  if (!parts || !policy.returnPathDomains.has(parts.domain)) return refuse('relayDenied');
  const local = parts.local.toLowerCase();
  const normalised = `${local}@${parts.domain}`;
  if (local === 'postmaster') return { ok: true, value: { kind: 'postmaster', address: normalised } };
  if (local === 'fbl') return { ok: true, value: { kind: 'fbl', address: normalised } };
  if (local.startsWith('b+')) {
    const id = safeId(verpRecipientId(policy.verp, normalised));
    return id === null ? refuse('unknownAddress') : { ok: true, value: { kind: 'verp', address: normalised, recipientId: id } };
  }
  if (local.startsWith('u+')) {
    // The mailto address of List-Unsubscribe: `u+<token>`, signed for its own purpose.
    const id = safeId(policy.unsubscribe.verifyId(local.slice(2)));
    return id === null ? refuse('unknownAddress') : { ok: true, value: { kind: 'unsubscribe', address: normalised, recipientId: id } };
  }
  return refuse('relayDenied');
}
