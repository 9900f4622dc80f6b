import { decide, type Bucket, type RateDecision, type WindowLimit } from './sliding.ts';

const HOUR = 3600;

/** Where counts are kept between processes; `C` is a transaction of the commit they ride in. */
export interface RateCountStore<C> {
  /** The buckets of the last hour of these keys, ascending by second. */
  load(conn: C | null, keyIds: number[], afterSecond: number): Promise<Map<number, Bucket[]>>;
  /** Adds these counts to the stored ones (an atomic increment, not a read then a write). */
  add(conn: C, rows: { keyId: number; second: number; count: number }[]): Promise<void>;
}

interface KeyState {
  /** As last read from the store or written to it by this process. */
  stored: Bucket[];
  /** Counted here, not yet written. */
  pending: Map<number, number>;
  /** Being written by the commit in flight. */
  inflight: Map<number, number> | null;
  refreshedAt: number;
  usedAt: number;
}

export interface AfterCommit {
  committed(): void;
  failed(): void;
}

/**
 * Rate-limit counting in memory, written to the database in the commits that happen anyway:
 * a request's count costs no write of its own. Counts ride the first commit at least
 * `flushAfterMs` after the last write (a timer starts one when none comes), so a busy process
 * writes them once a second, not in every commit. Each process decides on the stored counts of
 * the last hour (re-read every `refreshAfterMs` while a key is in use, so other processes'
 * requests count too) plus its own counts not yet stored. Within one process the limit is
 * exact; across processes a key can exceed it by what the others admitted since the last
 * re-read (at most `refreshAfterMs` + `flushAfterMs`).
 */
export class RateCounter<C> {
  private readonly states = new Map<number, KeyState>();
  private readonly loading = new Map<number, Promise<KeyState>>();
  private timer: NodeJS.Timeout | null = null;
  private readonly monotonic: () => number;
  private readonly flushAfterMs: number;
  private readonly refreshAfterMs: number;
  private lastWriteAt = -Infinity;
  /** Set by the flush timer and `stop`: the next commit writes whatever is pending. */
  private forced = false;

  constructor(
    private readonly deps: {
      store: RateCountStore<C>;
      /** Starts a commit (with nothing else in it) so counts are stored even when idle. */
      flush: () => Promise<unknown>;
      flushAfterMs?: number;
      refreshAfterMs?: number;
      monotonic?: () => number;
    },
  ) {
    this.monotonic = deps.monotonic ?? (() => performance.now());
    this.flushAfterMs = deps.flushAfterMs ?? 1000;
    this.refreshAfterMs = deps.refreshAfterMs ?? 1000;
  }

  /** Decides one request weighing `count` and, when allowed, counts it. */
  async hit(keyId: number, nowMs: number, windows: WindowLimit[], count = 1): Promise<RateDecision> {
    const nowSecond = Math.floor(nowMs / 1000);
    const state = this.states.get(keyId) ?? (await this.load(keyId, nowSecond));
    state.usedAt = this.monotonic();
    const decision = decide(this.buckets(state, nowSecond), nowSecond, windows, count);
    if (decision.allowed) {
      state.pending.set(nowSecond, (state.pending.get(nowSecond) ?? 0) + count);
      this.schedule();
    }
    return decision;
  }

  /** Takes back `count` counted in `second` for a request refused after all; stored with the next counts. */
  async giveBack(keyId: number, second: number, count: number): Promise<void> {
    const state = this.states.get(keyId) ?? (await this.load(keyId, second));
    state.pending.set(second, (state.pending.get(second) ?? 0) - count);
    this.schedule();
  }

  /** Whether a commit starting now has anything to do here (`beforeCommit`). */
  due(): boolean {
    if (this.forced) return true;
    const now = this.monotonic();
    const writeDue = now - this.lastWriteAt >= this.flushAfterMs;
    for (const state of this.states.values()) {
      if (now - state.refreshedAt >= this.refreshAfterMs || (writeDue && state.pending.size > 0)) return true;
    }
    return false;
  }

  /**
   * Runs inside a commit: writes the counts gathered since the last one and re-reads the keys
   * due for it. What it returns is told whether that commit held.
   */
  async beforeCommit(conn: C, nowMs: number): Promise<AfterCommit> {
    const now = this.monotonic();
    const rows: { keyId: number; second: number; count: number }[] = [];
    const written: KeyState[] = [];
    const due: number[] = [];
    this.forced = false;
    for (const [keyId, state] of this.states) {
      if (state.pending.size > 0 && state.inflight === null) {
        state.inflight = state.pending;
        state.pending = new Map();
        written.push(state);
        for (const [second, count] of state.inflight) rows.push({ keyId, second, count });
      }
      if (now - state.refreshedAt >= this.refreshAfterMs) {
        if (now - state.usedAt < 10 * this.refreshAfterMs) due.push(keyId);
        else if (state.pending.size === 0 && state.inflight === null) this.states.delete(keyId);
      }
    }
    if (rows.length > 0) this.lastWriteAt = now;
    const restore = () => {
      for (const state of written) {
        for (const [second, count] of state.inflight ?? []) state.pending.set(second, (state.pending.get(second) ?? 0) + count);
        state.inflight = null;
      }
      if (written.length > 0) this.schedule();
    };
    let fresh: Map<number, Bucket[]>;
    try {
      // In key and second order, so two processes' commits lock the rows in the same order.
      rows.sort((a, b) => a.keyId - b.keyId || a.second - b.second);
      if (rows.length > 0) await this.deps.store.add(conn, rows);
      fresh = due.length > 0 ? await this.deps.store.load(conn, due, Math.floor(nowMs / 1000) - HOUR) : new Map();
    } catch (error) {
      restore();
      throw error;
    }
    return {
      committed: () => {
        for (const state of written) {
          state.stored = merged(state.stored, state.inflight!);
          state.inflight = null;
        }
        for (const keyId of due) {
          const state = this.states.get(keyId);
          if (!state) continue;
          state.stored = fresh.get(keyId) ?? [];
          state.refreshedAt = now;
        }
      },
      failed: restore,
    };
  }

  /** Stops the flush timer; the caller commits once more to store what is pending. */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.forced = true;
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (![...this.states.values()].some((state) => state.pending.size > 0)) return;
      this.forced = true;
      this.deps.flush().catch(() => undefined);
    }, this.flushAfterMs);
    this.timer.unref();
  }

  private load(keyId: number, nowSecond: number): Promise<KeyState> {
    let loading = this.loading.get(keyId);
    if (!loading) {
      loading = this.deps.store
        .load(null, [keyId], nowSecond - HOUR)
        .then((rows) => {
          const state: KeyState = { stored: rows.get(keyId) ?? [], pending: new Map(), inflight: null, refreshedAt: this.monotonic(), usedAt: this.monotonic() };
          this.states.set(keyId, state);
          return state;
        })
        .finally(() => this.loading.delete(keyId));
      this.loading.set(keyId, loading);
    }
    return loading;
  }

  private buckets(state: KeyState, nowSecond: number): Bucket[] {
    let all = state.stored;
    if (state.inflight) all = merged(all, state.inflight);
    if (state.pending.size > 0) all = merged(all, state.pending);
    let first = 0;
    while (first < all.length && all[first].second <= nowSecond - HOUR) first++;
    // Drop what has left the longest window for good, so the kept list stays an hour long.
    if (first > 0 && all === state.stored) state.stored = all = all.slice(first);
    return first > 0 ? all.slice(first) : all;
  }
}

/** Buckets plus extra counts by second, ascending by second. */
function merged(buckets: Bucket[], extra: Map<number, number>): Bucket[] {
  const out = buckets.slice();
  for (const [second, count] of [...extra].sort((a, b) => a[0] - b[0])) {
    const last = out[out.length - 1];
    if (!last || second > last.second) out.push({ second, count });
    else if (second === last.second) out[out.length - 1] = { second, count: last.count + count };
    else {
      const i = out.findIndex((b) => b.second >= second);
      if (out[i].second === second) out[i] = { second, count: out[i].count + count };
      else out.splice(i, 0, { second, count });
    }
  }
  return out;
}
