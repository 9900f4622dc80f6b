// What the shaping bench reads off the provider farm: per destination, what arrived and when,
// the most connections and the most messages in any minute against its limits, and every refusal.

import type { ProviderStats } from '../../test/helpers/provider-farm.ts';
import { fmt } from './proc.ts';
import { HOST_CONNECTIONS, HOST_PER_MINUTE, HOSTS, PROVIDERS, sinkOf, type Farm } from './shaping-world.ts';

export interface Destination {
  stats: ProviderStats;
  perMinute: number;
  connections: number;
}

export function destinations(farm: Farm): { providers: Destination[]; hosts: Destination[] } {
  return {
    providers: PROVIDERS.map((p) => ({ stats: farm.farm.provider(p.name), perMinute: p.perMinute, connections: p.connections })),
    hosts: Array.from({ length: HOSTS }, (_, i) => ({ stats: farm.farm.provider(`host${i + 1}`), perMinute: HOST_PER_MINUTE, connections: HOST_CONNECTIONS })),
  };
}

export interface Measured {
  delivered: number;
  /** First to last message at the sinks. */
  seconds: number;
  /** Connections opened, refused ones included. */
  opened: number;
  /** The most connections open at once at any one sink. */
  peakConnections: number;
  /** The most messages any one sink accepted within 60 s. */
  maxPerMinute: number;
  refused: { rate: number; connections: number; other: number };
  /** Refusals, plus each sink whose peak of connections or messages in a minute went over its limit. */
  breaches: number;
}

export function measure(ds: Destination[]): Measured {
  const times = ds.flatMap((d) => d.stats.accepted.map((a) => a.at));
  const refused = { rate: 0, connections: 0, other: 0 };
  let breaches = 0;
  let maxPerMinute = 0;
  for (const d of ds) {
    for (const r of d.stats.refused) refused[r.reason === 'rate' || r.reason === 'connections' ? r.reason : 'other']++;
    const most = d.stats.maxInWindow(60_000);
    maxPerMinute = Math.max(maxPerMinute, most);
    breaches += d.stats.refused.length + (most > d.perMinute ? 1 : 0) + (d.stats.connectionsPeak > d.connections ? 1 : 0);
  }
  let first = Infinity;
  let last = -Infinity;
  for (const t of times) [first, last] = [Math.min(first, t), Math.max(last, t)];
  return {
    delivered: times.length,
    seconds: times.length > 1 ? (last - first) / 1000 : 0,
    opened: ds.reduce((n, d) => n + d.stats.connectionList.length, 0),
    peakConnections: Math.max(...ds.map((d) => d.stats.connectionsPeak)),
    maxPerMinute,
    refused,
    breaches,
  };
}

export const refusals = (m: Measured) => m.refused.rate + m.refused.connections + m.refused.other;

/** Which sinks still wait for messages, and what they refused: what a stalled delivery waited for. */
export function missing(farm: Farm, to: string[]): string {
  const want = new Map<string, number>();
  for (const address of to) want.set(sinkOf(address), (want.get(sinkOf(address)) ?? 0) + 1);
  const short = farm.farm
    .providers()
    .filter((p) => p.accepted.length < (want.get(p.name) ?? 0) || p.refused.length > 0)
    .map(
      (p) =>
        `${p.name}: ${(want.get(p.name) ?? 0) - p.accepted.length} to come, ${p.refused.length} refused${p.refused.length ? ` (last: ${p.refused.at(-1)!.reply})` : ''}`,
    );
  return short.length > 0 ? short.join('; ') : 'no sink short';
}

/** Columns right-aligned to their widest cell. */
export function table(rows: (string | number)[][]): string {
  const cells = rows.map((row) => row.map(String));
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((row) => row[i]?.length ?? 0)));
  return cells.map((row) => row.map((c, i) => c.padStart(widths[i]!)).join('  ')).join('\n');
}

/** `{"a":1}` as `a 1`, `none` when empty. */
export function counts(values: Record<string, number>): string {
  const entries = Object.entries(values);
  return entries.length > 0 ? entries.map(([k, n]) => `${k || '(none)'} ${fmt(n)}`).join(', ') : 'none';
}
