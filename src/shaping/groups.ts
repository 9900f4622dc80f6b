// Destination groups (SPEC §11): a recipient domain belongs to the group named after its MX hosts,
// so the 10,000 domains hosted at one provider are one queue with one set of limits.

import type { ProviderRule, ShapingLimits } from './types.ts';

const PROVIDER = 'provider:';

/** A DNS name as compared here: lowercase, without the root's trailing dot (or a suffix's leading one). */
function hostName(name: string): string {
  let s = name.trim().toLowerCase();
  if (s.endsWith('.')) s = s.slice(0, -1);
  if (s.startsWith('.')) s = s.slice(1);
  return s;
}

/** `host` is `suffix` or ends with `.suffix`: `google.com` matches `aspmx.l.google.com`, not `notgoogle.com`. */
function underSuffix(host: string, suffix: string): boolean {
  return suffix !== '' && (host === suffix || host.endsWith(`.${suffix}`));
}

/**
 * The group of a domain whose MX hosts are `mxHosts`, most preferred first (the implicit MX of
 * RFC 5321 §5.1, the domain itself, when it has no MX records). The first host that any rule
 * claims decides, so the group follows where the mail goes: a Google Workspace domain with a
 * backup MX of its own is in Google's group. For that host the rules are tried in list order;
 * callers pass `[...configured, ...BUILT_IN_PROVIDERS]` so an operator's rule wins. A domain no
 * rule claims is `mx:<first MX host>`.
 */
export function groupOf(mxHosts: readonly string[], providers: readonly ProviderRule[]): string {
  if (mxHosts.length === 0) throw new RangeError('groupOf needs at least one MX host (the implicit MX when there are none)');
  const hosts = mxHosts.map(hostName);
  for (const host of hosts) {
    for (const rule of providers) {
      if (rule.mx.some((suffix) => underSuffix(host, hostName(suffix)))) return `${PROVIDER}${rule.name}`;
    }
  }
  return `mx:${hosts[0]}`;
}

/**
 * The limits of `group`: a provider group's numbers, each taken from the first rule of that
 * name that gives it (so a configured rule named `google` that sets only `connections` keeps the
 * built-in's other numbers), the rest from `defaults`. `perMinute: null` in a rule is a number
 * given: unlimited. Any other group (`mx:`, or a provider no longer configured) takes the defaults.
 */
export function limitsOf(group: string, defaults: ShapingLimits, providers: readonly ProviderRule[]): ShapingLimits {
  const limits = { ...defaults };
  if (!group.startsWith(PROVIDER)) return limits;
  const named = providers.filter((rule) => rule.name === group.slice(PROVIDER.length));
  const first = <K extends 'connections' | 'perMinute' | 'perConnection'>(key: K) => named.find((rule) => rule[key] !== undefined)?.[key];
  const connections = first('connections');
  const perMinute = first('perMinute');
  const perConnection = first('perConnection');
  if (connections !== undefined) limits.connections = connections;
  if (perMinute !== undefined) limits.perMinute = perMinute;
  if (perConnection !== undefined) limits.perConnection = perConnection;
  return limits;
}
