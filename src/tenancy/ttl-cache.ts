/**
 * A small in-memory map whose entries live at most `ttlMs`, so a change made by another process
 * (the CLI revoking a key, changing limits, removing a domain) is seen within that time.
 * It keeps only what the hot path looked up successfully; a miss always goes to the database.
 * Time is a monotonic clock of its own, not the service clock: tests that stop the service
 * clock must not keep stale entries forever.
 */
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; until: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: K, value: V): void {
    if (this.entries.size >= this.maxEntries && !this.entries.has(key)) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, until: this.now() + this.ttlMs });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Drops what this process itself just changed, so its own next request sees the change at once. */
  clear(): void {
    this.entries.clear();
  }
}

/**
 * How long a cached key, limit or domain is trusted: "What the CLI changes reaches a running
 * server within 5 s" (SPEC §9, the CLI), with a margin.
 */
export const CHANGE_VISIBLE_WITHIN_MS = 4000;
