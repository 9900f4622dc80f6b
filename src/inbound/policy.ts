import { verpRecipientId } from '../delivery/verp.ts';
import type { TokenCodec } from '../tokens/index.ts';
import type { Reply } from '../core/smtp-reply.ts';
import { routeFor } from '../routes/match.ts';
import type { Receiving } from '../routes/receiving.ts';
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
  | { kind: 'postmaster'; address: string }
  /** Mail for an application: the route of a receiving domain that matched (SPEC §14). */
  | { kind: 'route'; address: string; routeId: number; workspaceId: number };

export type Decision<T> = { ok: true; value: T } | { ok: false; reply: Reply; reason: string };

export interface RecipientPolicy {
  /** Lowercased return-path domains: the global one and `bounces.<d>` of each verified domain. */
  returnPathDomains: ReadonlySet<string>;
  verp: TokenCodec;
  unsubscribe: TokenCodec;
  maxRecipients: number;
  /** Receiving domains and their routes; none when absent. */
  receiving?: Receiving;
  /** RCPTs per transaction when every one is for a route (SPEC §14: 100). */
  maxRouteRecipients?: number;
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
  const parts = splitAddress(address);
  const receiving = parts && parts !== 'routing' ? policy.receiving?.domains.get(parts.domain) : undefined;
  const cap = receiving ? (policy.maxRouteRecipients ?? policy.maxRecipients) : policy.maxRecipients;
  if (session.accepted >= cap) return refuse('tooManyRecipients');
  if (parts === 'routing') return refuse('routingRefused');
  if (parts && receiving) {
    // A receiving domain takes mail for its routes only: anything else is no mailbox here, and
    // never relayed (SPEC §14).
    const normalised = `${parts.local.toLowerCase()}@${parts.domain}`;
    const route = routeFor(receiving.routes, normalised);
    return route ? { ok: true, value: { kind: 'route', address: normalised, routeId: route.id, workspaceId: route.workspaceId } } : refuse('noRoute');
  }
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
