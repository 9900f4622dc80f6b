/** What the pool needs from a connection. */
export interface Poolable {
  readonly alive: boolean;
  /** Transactions completed on it so far. */
  readonly transactions: number;
  /** Makes the connection ready for another transaction; false when it is not. */
  reset(): Promise<boolean>;
  quit(): void;
  destroy(): void;
  onClose(listener: () => void): void;
}

export interface PoolLimits {
  perKey: number;
  total: number;
  idleTimeoutMs: number;
}

/** How long a connection being closed still counts, at most, when its close is never seen. */
const CLOSE_WAIT_MS = 2000;
/** How long after its close a connection still counts, for the receiver to have seen the close too. */
const CLOSE_GRACE_MS = 100;

type Grant<C, F> = { session: C } | { failure: F } | { retry: true };

/**
 * The destination group a connection belongs to (SPEC §11): at most `connections` open to all
 * its hosts together, each closed after `perConnection` transactions. The latest caller's
 * figures apply, so a throttled group shrinks as its connections come back.
 */
export interface GroupLimit {
  name: string;
  connections: number;
  perConnection: number;
}

interface Entry {
  key: string;
  group: string | null;
  idleTimer: NodeJS.Timeout | null;
}

interface Waiter<C, F> {
  group: string | null;
  grant: (grant: Grant<C, F>) => void;
}

/**
 * Connections per destination (`host:port`), at most `perKey` each, `total` overall and, for a
 * destination of a group, the group's `connections` over all its destinations; callers beyond
 * a cap queue in arrival order. A released connection goes straight to the next caller
 * for its destination, or idles until `idleTimeoutMs` (Postfix keeps idle SMTP connections for
 * a few seconds too, `smtp_connection_cache_time_limit`, because receivers drop idle clients).
 */
export class ConnectionPool<C extends Poolable, F> {
  private readonly limits: PoolLimits;
  private readonly entries = new Map<C, Entry>();
  /** Connections per key, counting those still being opened. */
  private readonly counts = new Map<string, number>();
  private readonly idle = new Map<string, C[]>();
  private readonly waiters = new Map<string, Waiter<C, F>[]>();
  /** Connections per group, counting those still being opened, and each group's latest limits. */
  private readonly groupCounts = new Map<string, number>();
  private readonly groupLimits = new Map<string, GroupLimit>();
  private total = 0;
  private closed = false;
  private closedFailure: F | null = null;
  private drained: (() => void) | null = null;

  constructor(limits: PoolLimits) {
    this.limits = limits;
  }

  /** `key` names one destination; every destination of a group must have a key of its own. */
  async acquire(key: string, open: () => Promise<C | F>, isConnection: (value: C | F) => value is C, group?: GroupLimit): Promise<C | F> {
    const groupName = group?.name ?? null;
    if (group) this.groupLimits.set(group.name, group);
    for (;;) {
      if (this.closed) return this.closedFailure as F;
      const warm = this.takeIdle(key);
      if (warm) return warm;
      if (this.count(key) < this.limits.perKey && this.groupRoom(groupName) && (this.total < this.limits.total || this.evictIdle())) {
        return this.openNew(key, groupName, open, isConnection);
      }
      const grant = await new Promise<Grant<C, F>>((resolve) => this.queue(key).push({ group: groupName, grant: resolve }));
      if ('session' in grant) return grant.session;
      if ('failure' in grant) return grant.failure;
    }
  }

  /**
   * Gives a connection back after a transaction; `reusable` false discards it. `reset` first
   * resets it (after a refused transaction); a completed transaction leaves the session clean
   * (RFC 5321 §4.1.1.4), so the next MAIL follows at once.
   */
  async release(session: C, reusable: boolean, reset = true): Promise<void> {
    const entry = this.entries.get(session);
    if (!entry) return;
    if (!reusable || this.closed || !session.alive || (reset && !(await session.reset())) || this.closed) {
      this.discard(session, 'destroy');
      return;
    }
    // Its share of messages sent, or its group shrank (throttled): the connection closes politely.
    const limit = entry.group === null ? undefined : this.groupLimits.get(entry.group);
    if (limit && (session.transactions >= limit.perConnection || this.groupCount(entry.group) > limit.connections)) {
      this.discard(session, 'quit');
      return;
    }
    const waiter = this.queue(entry.key).shift();
    if (waiter) return waiter.grant({ session });
    // Under the overall cap, an idle connection here would starve callers of other destinations.
    if (this.total >= this.limits.total && this.othersWaiting(entry.key)) {
      this.discard(session, 'quit');
      return;
    }
    const timer = setTimeout(() => this.discard(session, 'quit'), this.limits.idleTimeoutMs);
    timer.unref();
    entry.idleTimer = timer;
    this.idleList(entry.key).push(session);
    // A caller of another host of this group, waiting for the group's room, may take its place.
    if (entry.group !== null) this.wakeGroupWaiter(entry.group);
  }

  stats(): { open: number; perHost: Record<string, number> } {
    const perHost: Record<string, number> = {};
    for (const [key, count] of this.counts) if (count > 0) perHost[key] = count;
    return { open: this.total, perHost };
  }

  /** Fails queued callers with `failure`, closes idle connections, resolves when all are gone. */
  close(failure: F): Promise<void> {
    this.closed = true;
    this.closedFailure = failure;
    for (const queue of this.waiters.values()) for (const waiter of queue.splice(0)) waiter.grant({ failure });
    for (const list of this.idle.values()) for (const session of [...list]) this.discard(session, 'quit');
    if (this.total === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.drained = resolve;
    });
  }

  private async openNew(key: string, group: string | null, open: () => Promise<C | F>, isConnection: (value: C | F) => value is C) {
    this.counts.set(key, this.count(key) + 1);
    if (group !== null) this.groupCounts.set(group, this.groupCount(group) + 1);
    this.total++;
    let opened: C | F;
    try {
      opened = await open();
    } catch (err) {
      this.uncount(key, group);
      throw err;
    }
    if (!isConnection(opened)) {
      this.uncount(key, group);
      // Nobody else is connected there: those queued behind this attempt would only repeat it
      // and wait out the same timeout, so they get its failure now.
      if (this.count(key) === 0) for (const waiter of this.queue(key).splice(0)) waiter.grant({ failure: opened });
      return opened;
    }
    this.entries.set(opened, { key, group, idleTimer: null });
    opened.onClose(() => this.discard(opened, 'none'));
    if (this.closed) {
      this.discard(opened, 'quit');
      return this.closedFailure as F;
    }
    return opened;
  }

  private takeIdle(key: string): C | undefined {
    const list = this.idleList(key);
    while (list.length > 0) {
      const session = list.pop()!;
      const entry = this.entries.get(session);
      if (entry?.idleTimer) clearTimeout(entry.idleTimer);
      if (entry) entry.idleTimer = null;
      if (session.alive) return session;
      this.discard(session, 'none');
    }
    return undefined;
  }

  /** Whether the group may open one more connection, closing an idle one of its own if that makes room. */
  private groupRoom(group: string | null): boolean {
    if (group === null) return true;
    const limit = this.groupLimits.get(group)?.connections ?? Infinity;
    if (this.groupCount(group) < limit) return true;
    for (const [session, entry] of this.entries) {
      if (entry.group === group && entry.idleTimer !== null) {
        this.discard(session, 'quit');
        return this.groupCount(group) < limit;
      }
    }
    return false;
  }

  /** Frees room under the overall cap by closing the longest-idle connection of any destination. */
  private evictIdle(): boolean {
    for (const list of this.idle.values()) {
      const oldest = list[0];
      if (oldest) {
        this.discard(oldest, 'quit');
        return this.total < this.limits.total;
      }
    }
    return false;
  }

  private discard(session: C, how: 'quit' | 'destroy' | 'none'): void {
    const entry = this.entries.get(session);
    if (!entry) return;
    this.entries.delete(session);
    if (entry.idleTimer) clearTimeout(entry.idleTimer);
    const list = this.idleList(entry.key);
    const index = list.indexOf(session);
    if (index >= 0) list.splice(index, 1);
    if (how === 'none') return this.uncount(entry.key, entry.group);
    // Counted until it has closed: a receiver that caps connections still counts one we have
    // said QUIT on, and would refuse the next at its greeting.
    let counted = true;
    const gone = () => {
      if (!counted) return;
      counted = false;
      clearTimeout(timer);
      this.uncount(entry.key, entry.group);
    };
    const timer = setTimeout(gone, CLOSE_WAIT_MS);
    timer.unref();
    // The receiver sees the close a moment after we do (our FIN reaches it after its own):
    // until then it still counts the connection.
    session.onClose(() => setTimeout(gone, CLOSE_GRACE_MS).unref());
    if (how === 'quit') session.quit();
    else session.destroy();
  }

  private uncount(key: string, group: string | null): void {
    this.counts.set(key, this.count(key) - 1);
    if (group !== null) {
      const left = this.groupCount(group) - 1;
      if (left > 0) this.groupCounts.set(group, left);
      else this.groupCounts.delete(group);
    }
    this.total--;
    if (this.closed && this.total === 0) this.drained?.();
    this.wakeOne(key);
    // Delivery meets thousands of destinations; forget those with nothing left.
    if (this.count(key) === 0 && this.queue(key).length === 0 && this.idleList(key).length === 0) {
      this.counts.delete(key);
      this.waiters.delete(key);
      this.idle.delete(key);
    }
  }

  /** A slot opened: the first caller of this destination, else of any destination with room. */
  private wakeOne(preferred: string): void {
    const keys = [preferred, ...this.waiters.keys()];
    for (const key of keys) {
      const queue = this.queue(key);
      const first = queue[0];
      if (first && this.count(key) < this.limits.perKey && this.groupCount(first.group) < (this.groupLimits.get(first.group ?? '')?.connections ?? Infinity)) {
        queue.shift()!.grant({ retry: true });
        return;
      }
    }
  }

  private wakeGroupWaiter(group: string): void {
    for (const queue of this.waiters.values()) {
      if (queue[0]?.group === group) {
        queue.shift()!.grant({ retry: true });
        return;
      }
    }
  }

  private othersWaiting(key: string): boolean {
    for (const [other, queue] of this.waiters) if (other !== key && queue.length > 0) return true;
    return false;
  }

  private count(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  private groupCount(group: string | null): number {
    return group === null ? 0 : (this.groupCounts.get(group) ?? 0);
  }

  private queue(key: string): Waiter<C, F>[] {
    let queue = this.waiters.get(key);
    if (!queue) {
      queue = [];
      this.waiters.set(key, queue);
    }
    return queue;
  }

  private idleList(key: string): C[] {
    let list = this.idle.get(key);
    if (!list) {
      list = [];
      this.idle.set(key, list);
    }
    return list;
  }
}
