/**
 * Which route takes a received recipient (SPEC §14), as pure functions. A match is an address
 * (`support@acme.test`), a catch-all (`*@acme.test`) or a pattern with one `*` in the local
 * part (`*+tickets@acme.test`, `reply-*@acme.test`). Local parts compare without case: RFC 5321
 * §2.4 lets a receiver treat them so, and every mailbox provider does.
 */

export interface RouteMatch {
  /** The local part before the `*`, lowercased; the whole local part of an address. */
  prefix: string;
  /** The local part after the `*`, lowercased; null for an address (no `*`). */
  suffix: string | null;
  domain: string;
}

/** A route as the matcher needs it. */
export interface MatchableRoute {
  id: number;
  match: RouteMatch;
  priority: number;
}

// Dot-atom text (RFC 5322 §3.2.3) without the characters that route mail elsewhere ("%", "!")
// and without "@", quotes or spaces; `*` is the wildcard and is checked apart.
const LOCAL_CHARS = /^[a-z0-9.#$&'+/=?^_`{|}~-]*$/;
const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/;

/** Reads a route's `match`; a string is the problem, for the API's 422. */
export function parseMatch(input: string): RouteMatch | string {
  const text = input.trim().toLowerCase();
  const at = text.lastIndexOf('@');
  if (at <= 0) return 'Field `match` must be an address, `*@domain` or a local part with one `*`, such as `*+tag@domain`';
  const local = text.slice(0, at);
  const domain = text.slice(at + 1).replace(/\.$/, '');
  if (!DOMAIN.test(domain)) return `Field \`match\`: "${domain.slice(0, 100)}" is not a domain name`;
  if (local.length > 64) return 'Field `match`: the local part is longer than 64 characters';
  const star = local.indexOf('*');
  if (star !== local.lastIndexOf('*')) return 'Field `match` may hold one `*` only';
  const prefix = star < 0 ? local : local.slice(0, star);
  const suffix = star < 0 ? null : local.slice(star + 1);
  if (!LOCAL_CHARS.test(prefix) || !LOCAL_CHARS.test(suffix ?? '')) return 'Field `match`: the local part holds a character an address cannot';
  return { prefix, suffix, domain };
}

export const formatMatch = (m: RouteMatch): string => `${m.prefix}${m.suffix === null ? '' : `*${m.suffix}`}@${m.domain}`;

/**
 * How specific a match is: an address beats every pattern; among patterns, the one that names
 * more characters of the local part, so `*+tickets@d` beats `*@d`.
 */
export const specificity = (m: RouteMatch): number => (m.suffix === null ? Number.MAX_SAFE_INTEGER : m.prefix.length + m.suffix.length);

/** Whether a recipient (`local@domain`) falls under a match. */
export function matches(m: RouteMatch, local: string, domain: string): boolean {
  if (domain !== m.domain) return false;
  if (m.suffix === null) return local === m.prefix;
  return local.length >= m.prefix.length + m.suffix.length && local.startsWith(m.prefix) && local.endsWith(m.suffix);
}

/**
 * The route that takes a recipient, or null: the most specific match, then the lowest
 * `priority` (0 first, as in Mailgun's and Postal's routes), then the oldest route.
 */
export function routeFor<R extends MatchableRoute>(routes: readonly R[], address: string): R | null {
  const at = address.lastIndexOf('@');
  if (at <= 0) return null;
  const local = address.slice(0, at).toLowerCase();
  const domain = address
    .slice(at + 1)
    .toLowerCase()
    .replace(/\.$/, '');
  let best: R | null = null;
  for (const r of routes) {
    if (!matches(r.match, local, domain)) continue;
    if (best === null || better(r, best)) best = r;
  }
  return best;
}

function better(a: MatchableRoute, b: MatchableRoute): boolean {
  const sa = specificity(a.match);
  const sb = specificity(b.match);
  if (sa !== sb) return sa > sb;
  if (a.priority !== b.priority) return a.priority < b.priority;
  return a.id < b.id;
}
