import type { Clock } from '../core/ports.ts';

const keepAll = (): boolean => true;

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

  get(key: string, load: () => Promise<V>, keep: (value: V) => boolean = keepAll): Promise<V> {
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
    void this.settle(key, entry, keep);
    this.evict(Infinity);
    return entry.value;
  }

  /**
   * Weighs a loaded value, or forgets it. An async method rather than callbacks made per load:
   * on Node 20 a closure's optimised code is dropped at every full collection (bench/NOTES.md).
   */
  private async settle(key: string, entry: Entry<V>, keep: (value: V) => boolean): Promise<void> {
    let v: V;
    try {
      v = await entry.value;
    } catch {
      this.forget(key, entry);
      return;
    }
    if (!keep(v)) return this.forget(key, entry);
    if (!this.limit || this.entries.get(key) !== entry) return;
    entry.weight = this.limit.weigh(v);
    this.weight += entry.weight;
    this.evict(this.limit.maxWeight);
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
