import { Batcher } from '../core/batcher.ts';
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

interface Hit {
  keyId: number;
  second: number;
  windows: WindowLimit[];
}

/**
 * Exact rate limits shared by processes, one call per batch: requests read in the same turn of
 * the event loop, or that arrive while a call is in flight, go together in the next one, so a
 * busy process pays one round trip for many requests and an idle one answers after one turn.
 * The store decides each group under the key's lock; here each request gets its own figures
 * (remaining, reset) as if counted one by one.
 */
export class BatchedRateLimit {
  private readonly batcher: Batcher<Hit, RateDecision>;

  constructor(private readonly hitGroups: HitGroups) {
    this.batcher = new Batcher({ name: 'the rate limiter', maxInFlight: 1, start: 'immediate', write: (batch) => this.send(batch.take()) });
  }

  hit(keyId: number, nowMs: number, windows: WindowLimit[]): Promise<RateDecision> {
    return this.batcher.add({ keyId, second: Math.floor(nowMs / 1000), windows });
  }

  /** One call per set of window lengths (every key has the same: minute and hour). */
  private async send(batch: Hit[]): Promise<RateDecision[]> {
    const decisions = new Array<RateDecision>(batch.length);
    const bySeconds = new Map<string, number[]>();
    batch.forEach((hit, i) => {
      const id = hit.windows.map((w) => w.seconds).join(',');
      bySeconds.set(id, [...(bySeconds.get(id) ?? []), i]);
    });
    for (const indexes of bySeconds.values()) {
      const hits = indexes.map((i) => batch[i]!);
      (await this.decideGroups(hits)).forEach((decision, k) => (decisions[indexes[k]!] = decision));
    }
    return decisions;
  }

  /** Hits whose windows have the same lengths: one call to the store. */
  private async decideGroups(hits: Hit[]): Promise<RateDecision[]> {
    const seconds = hits[0]!.windows.map((w) => w.seconds);
    const groups = new Map<string, { group: RateHitGroup; members: number[] }>();
    hits.forEach((p, i) => {
      const limits = p.windows.map((w) => w.limit);
      const id = `${p.keyId}:${p.second}:${limits.join(',')}`;
      const entry = groups.get(id) ?? { group: { keyId: p.keyId, second: p.second, count: 0, limits }, members: [] };
      groups.set(id, entry);
      entry.group.count += 1;
      entry.members.push(i);
    });
    const entries = [...groups.values()];
    const results = await this.hitGroups(
      entries.map((e) => e.group),
      seconds,
    );
    const decisions = new Array<RateDecision>(hits.length);
    entries.forEach((entry, i) => {
      const { allowed, before } = results[i]!;
      entry.members.forEach((index, k) => {
        const p = hits[index]!;
        // The k-th request of the group saw the buckets before it plus the group's earlier ones.
        const counted = Math.min(k, allowed);
        const decision = decide(counted > 0 ? withCount(before, p.second, counted) : before, p.second, p.windows);
        // The store applied the same rule; its verdict is the one that was counted.
        decisions[index] = decision.allowed === k < allowed ? decision : { ...decision, allowed: k < allowed };
      });
    });
    return decisions;
  }
}

/** Buckets with `count` more requests at `second`, ascending by second. */
function withCount(buckets: Bucket[], second: number, count: number): Bucket[] {
  const out = buckets.filter((b) => b.second !== second);
  const existing = buckets.find((b) => b.second === second)?.count ?? 0;
  out.push({ second, count: existing + count });
  return out.sort((a, b) => a.second - b.second);
}
