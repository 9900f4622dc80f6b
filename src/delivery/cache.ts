import type { Clock } from '../core/ports.ts';

interface Entry<V> {
  value: Promise<V>;
  expires: number;
  /** Known once the value has loaded. */
  weight: number;
}

/**
 * A small bounded cache of promises with a time to live. Concurrent callers for one key share
 * one load (200 recipients of one message build its MIME once; 200 recipients at one domain
 * share one MX lookup); a failed load is forgotten at once so the next caller tries again.
 * Bounded by entries and, with `weigh`, by the total weight (bytes) of what is kept.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private weight = 0;

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly limit: { weigh: (value: V) => number; maxWeight: number } | null = null,
  ) {}

  get(key: string, load: () => Promise<V>, keep: (value: V) => boolean = () => true): Promise<V> {
    const now = this.clock.now();
    const hit = this.entries.get(key);
    if (hit && hit.expires > now) {
      // Re-inserted so the map's order is least recently used first.
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.value;
    }
    if (hit) this.remove(key);
    const entry: Entry<V> = { value: load(), expires: now + this.ttlMs, weight: 0 };
    this.entries.set(key, entry);
    entry.value.then(
      (v) => {
        if (!keep(v)) return this.forget(key, entry);
        if (!this.limit || this.entries.get(key) !== entry) return;
        entry.weight = this.limit.weigh(v);
        this.weight += entry.weight;
        this.evict(this.limit.maxWeight);
      },
      () => this.forget(key, entry),
    );
    this.evict(Infinity);
    return entry.value;
  }

  /** Whether a live entry (loaded or loading) is kept for `key`. */
  has(key: string): boolean {
    const hit = this.entries.get(key);
    return hit !== undefined && hit.expires > this.clock.now();
  }

  clear(): void {
    this.entries.clear();
    this.weight = 0;
  }

  /** Least recently used first, until both bounds hold; callers holding a promise keep it. */
  private evict(maxWeight: number): void {
    while (this.entries.size > this.maxEntries || (this.weight > maxWeight && this.entries.size > 0)) {
      this.remove(this.entries.keys().next().value!);
    }
  }

  private remove(key: string): void {
    this.weight -= this.entries.get(key)?.weight ?? 0;
    this.entries.delete(key);
  }

  private forget(key: string, entry: Entry<V>): void {
    if (this.entries.get(key) === entry) this.remove(key);
  }
}
