import type { Clock } from '../core/ports.ts';

/**
 * A small bounded cache of promises with a time to live. Concurrent callers for one key share
 * one load (200 recipients of one message build its MIME once; 200 recipients at one domain
 * share one MX lookup); a failed load is forgotten at once so the next caller tries again.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: Promise<V>; expires: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number,
    private readonly maxEntries: number,
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
    const value = load();
    this.entries.set(key, { value, expires: now + this.ttlMs });
    value.then(
      (v) => {
        if (!keep(v)) this.forget(key, value);
      },
      () => this.forget(key, value),
    );
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return value;
  }

  clear(): void {
    this.entries.clear();
  }

  private forget(key: string, value: Promise<V>): void {
    if (this.entries.get(key)?.value === value) this.entries.delete(key);
  }
}
