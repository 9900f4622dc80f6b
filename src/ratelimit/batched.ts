import { decide, type Bucket, type RateDecision, type WindowLimit } from './sliding.ts';

/** `count` requests of one key in one second, with that key's limit for each window. */
export interface RateHitGroup {
  keyId: number;
  second: number;
  count: number;
  limits: number[];
}

/** How many of a group's requests were allowed, and the key's buckets before the group. */
export interface RateGroupResult {
  allowed: number;
  before: Bucket[];
}

/** Decides and counts groups exactly, under the key's lock, in one call (the database). */
export type HitGroups = (groups: RateHitGroup[], windowSeconds: number[]) => Promise<RateGroupResult[]>;

interface Pending {
  keyId: number;
  second: number;
  windows: WindowLimit[];
  resolve(decision: RateDecision): void;
  reject(error: unknown): void;
}

/**
 * Exact rate limits shared by processes, one call per batch: requests read in the same turn of
 * the event loop, or that arrive while a call is in flight, go together in the next one, so a
 * busy process pays one round trip for many requests and an idle one answers after one turn.
 * The store decides each group under the key's lock; here each request gets its own figures
 * (remaining, reset) as if counted one by one.
 */
export class BatchedRateLimit {
  private queue: Pending[] = [];
  private inFlight = false;

  constructor(private readonly hitGroups: HitGroups) {}

  hit(keyId: number, nowMs: number, windows: WindowLimit[]): Promise<RateDecision> {
    return new Promise<RateDecision>((resolve, reject) => {
      this.queue.push({ keyId, second: Math.floor(nowMs / 1000), windows, resolve, reject });
      if (!this.inFlight) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.inFlight = true;
    try {
      while (this.queue.length > 0) {
        // Requests read in the same turn of the event loop go in one call.
        await new Promise((resolve) => setImmediate(resolve));
        const batch = this.queue;
        this.queue = [];
        await this.send(batch);
      }
    } finally {
      this.inFlight = false;
    }
  }

  private async send(batch: Pending[]): Promise<void> {
    // Window lengths are the same for every key (minute, hour); only the limits differ.
    const seconds = batch[0].windows.map((w) => w.seconds);
    const odd = batch.filter((p) => !sameLengths(p.windows, seconds));
    const even = odd.length === 0 ? batch : batch.filter((p) => sameLengths(p.windows, seconds));
    if (odd.length > 0) this.queue.unshift(...odd);

    const groups = new Map<string, { group: RateHitGroup; members: Pending[] }>();
    for (const p of even) {
      const limits = p.windows.map((w) => w.limit);
      const id = `${p.keyId}:${p.second}:${limits.join(',')}`;
      const entry = groups.get(id) ?? { group: { keyId: p.keyId, second: p.second, count: 0, limits }, members: [] };
      groups.set(id, entry);
      entry.group.count += 1;
      entry.members.push(p);
    }
    const entries = [...groups.values()];
    let results: RateGroupResult[];
    try {
      results = await this.hitGroups(entries.map((e) => e.group), seconds);
    } catch (error) {
      for (const p of even) p.reject(error);
      return;
    }
    entries.forEach((entry, i) => {
      const { allowed, before } = results[i];
      entry.members.forEach((p, k) => {
        // The k-th request of the group saw the buckets before it plus the group's earlier ones.
        const counted = Math.min(k, allowed);
        const decision = decide(counted > 0 ? withCount(before, p.second, counted) : before, p.second, p.windows);
        // The store applied the same rule; its verdict is the one that was counted.
        p.resolve(decision.allowed === (k < allowed) ? decision : { ...decision, allowed: k < allowed });
      });
    });
  }
}

function sameLengths(windows: WindowLimit[], seconds: number[]): boolean {
  return windows.length === seconds.length && windows.every((w, i) => w.seconds === seconds[i]);
}

/** Buckets with `count` more requests at `second`, ascending by second. */
function withCount(buckets: Bucket[], second: number, count: number): Bucket[] {
  const out = buckets.filter((b) => b.second !== second);
  const existing = buckets.find((b) => b.second === second)?.count ?? 0;
  out.push({ second, count: existing + count });
  return out.sort((a, b) => a.second - b.second);
}
