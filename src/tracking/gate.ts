/**
 * In-memory bounds on tracking hits, per process: a per-IP rate limit (fixed one-minute
 * windows) and the de-duplication of identical hits from one IP within a window. Both maps are
 * kept in insertion order and pruned from the front, so memory stays under `maxKeys` however
 * many addresses a flood uses.
 */
export interface GateOptions {
  /** Hits per IP per minute before 429. */
  perMinute: number;
  /** Identical hits from one IP within this many ms count once. */
  dedupMs: number;
  maxKeys: number;
}

export const DEFAULT_GATE: GateOptions = { perMinute: 600, dedupMs: 10_000, maxKeys: 100_000 };

class ExpiringMap<V extends { until: number }> {
  private readonly map = new Map<string, V>();
  constructor(private readonly maxKeys: number) {}

  get(key: string, now: number): V | undefined {
    this.prune(now);
    const v = this.map.get(key);
    return v && v.until > now ? v : undefined;
  }

  set(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    while (this.map.size > this.maxKeys) this.map.delete(this.map.keys().next().value!);
  }

  private prune(now: number): void {
    // Entries are appended in time order with one lifetime each, so expired ones lead.
    for (const [key, v] of this.map) {
      if (v.until > now) break;
      this.map.delete(key);
    }
  }
}

export class HitGate {
  private readonly windows: ExpiringMap<{ until: number; count: number }>;
  private readonly seen: ExpiringMap<{ until: number }>;

  constructor(private readonly options: GateOptions = DEFAULT_GATE) {
    this.windows = new ExpiringMap(options.maxKeys);
    this.seen = new ExpiringMap(options.maxKeys);
  }

  /** Counts a hit from `ip`; null when allowed, else seconds until its window ends. */
  limit(ip: string, now: number): number | null {
    const window = this.windows.get(ip, now);
    if (!window) {
      this.windows.set(ip, { until: now + 60_000, count: 1 });
      return null;
    }
    if (window.count >= this.options.perMinute) return Math.max(1, Math.ceil((window.until - now) / 1000));
    window.count += 1;
    return null;
  }

  /** True for the first of identical hits (same IP, same key) within the de-dup window. */
  first(ip: string, key: string, now: number): boolean {
    const id = `${ip}\n${key}`;
    if (this.seen.get(id, now)) return false;
    this.seen.set(id, { until: now + this.options.dedupMs });
    return true;
  }
}
