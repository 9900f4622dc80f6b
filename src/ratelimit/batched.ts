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
  /** What the request weighs: 1, or each message of a batch. */
  count: number;
}

/** Takes back counts the store added for a weighted request that did not fit whole. */
export type GiveBack = (keyId: number, second: number, count: number) => Promise<void>;

/**
 * Exact rate limits shared by processes, one call per batch: requests read in the same turn of
 * the event loop, or that arrive while a call is in flight, go together in the next one, so a
 * busy process pays one round trip for many requests and an idle one answers after one turn.
 * The store decides each group under the key's lock; here each request gets its own figures
 * (remaining, reset) as if counted one by one.
 */
export class BatchedRateLimit {
  private readonly batcher: Batcher<Hit, RateDecision>;

  constructor(
    private readonly hitGroups: HitGroups,
    private readonly giveBack: GiveBack,
  ) {
    this.batcher = new Batcher({ name: 'the rate limiter', maxInFlight: 1, start: 'immediate', write: (batch) => this.send(batch.take()) });
  }

  hit(keyId: number, nowMs: number, windows: WindowLimit[], count = 1): Promise<RateDecision> {
    return this.batcher.add({ keyId, second: Math.floor(nowMs / 1000), windows, count });
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
      // A weighted request is a group of its own: the store allows it only whole.
      const id = p.count === 1 ? `${p.keyId}:${p.second}:${limits.join(',')}` : `weighted ${i}`;
      const entry = groups.get(id) ?? { group: { keyId: p.keyId, second: p.second, count: 0, limits }, members: [] };
      groups.set(id, entry);
      entry.group.count += p.count;
      entry.members.push(i);
    });
    const entries = [...groups.values()];
    const results = await this.hitGroups(
      entries.map((e) => e.group),
      seconds,
    );
    const decisions = new Array<RateDecision>(hits.length);
    const givingBack: Promise<void>[] = [];
    entries.forEach((entry, i) => {
      const { allowed, before } = results[i]!;
      const weighted = hits[entry.members[0]!]!;
      if (weighted.count > 1) {
        const decision = decide(before, weighted.second, weighted.windows, weighted.count);
        const whole = allowed === weighted.count;
        // The store counted what fitted of a request that is refused: that part is taken back.
        if (!whole && allowed > 0) givingBack.push(this.giveBack(weighted.keyId, weighted.second, allowed));
        decisions[entry.members[0]!] = decision.allowed === whole ? decision : { ...decision, allowed: whole };
        return;
      }
      entry.members.forEach((index, k) => {
        const p = hits[index]!;
        // The k-th request of the group saw the buckets before it plus the group's earlier ones.
        const counted = Math.min(k, allowed);
        const decision = decide(counted > 0 ? withCount(before, p.second, counted) : before, p.second, p.windows);
        // The store applied the same rule; its verdict is the one that was counted.
        decisions[index] = decision.allowed === k < allowed ? decision : { ...decision, allowed: k < allowed };
      });
    });
    await Promise.all(givingBack);
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
