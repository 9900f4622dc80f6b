import type { Config } from '../config/schema.ts';
import type { Clock, Logger } from '../core/ports.ts';
import type { Metrics } from '../metrics/registry.ts';
import { groupOf, limitsOf } from '../shaping/groups.ts';
import { pacingInterval } from '../shaping/pacing.ts';
import { BUILT_IN_PROVIDERS } from '../shaping/providers.ts';
import { BUILT_IN_REPLY_RULES, compileReplyRules, matchReply, type CompiledReplyRule } from '../shaping/reply-rules.ts';
import type { ProviderRule, ShapingAction, ShapingLimits } from '../shaping/types.ts';
import type { Db } from '../store/db.ts';
import { queueControlRepo, type GroupHold } from '../store/queue-control.ts';
import { shapingRepo, type GroupState } from '../store/shaping.ts';
import { DomainGroups } from './domain-groups.ts';
import type { Pacer } from './pacer.ts';
import { SourceHealth, type AttemptEnd } from './source-health.ts';
import { WarmupLedger } from './warmup-ledger.ts';

export interface ShaperDeps {
  config: Config;
  db: Db;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  pacer: Pacer;
  /** Told when the number of recipients waiting for a pacing slot changes (they hold no claim slot). */
  changed?: () => void;
}

/** A sending address (SPEC §12): the local address a connection binds, and the name it greets with. */
export interface SourceAddress {
  address: string;
  ehlo: string;
}

/**
 * Where a recipient goes out: its destination group through one sending address. The limits of
 * SPEC §11 hold per lane, so per group and address; without sending addresses a lane is its group.
 */
export interface Lane {
  group: string;
  source: SourceAddress | null;
  /** `group`, or `group@address`: the name its state and pacing go by. */
  key: string;
}

/** Whether a recipient may start now, and through which lane; `done` when its transaction has ended. */
export type Admission = { kind: 'go'; lane: Lane; done: () => void } | { kind: 'wait'; until: number; reason: string; why: 'suspended' | 'paced' | 'warmup' | 'address' };

/** What a reply matched by a shaping rule did: the recipient waits until `until`, no attempt counted. */
export interface ShapedReply {
  action: ShapingAction;
  until: number;
  reason: string;
}

/** What a claim may take: no row of an excluded group, at most `caps` rows of a group it names, `defaultCap` of any other. */
export interface ClaimShape {
  exclude: string[];
  caps: [group: string, cap: number][];
  defaultCap: number;
}

/** How far ahead a worker takes a pacing slot and waits for it, rather than put the recipient back. */
const HORIZON_MS = 2000;
/** Rows a lane may have claimed per connection: one sending, some being signed behind it. */
const CLAIMED_PER_CONNECTION = 4;

const laneKey = (group: string, source: SourceAddress | null): string => (source ? `${group}@${source.address}` : group);

/**
 * A delivery worker's view of traffic shaping (SPEC §11) and sending addresses (§12): each
 * recipient domain's destination group (from its MX hosts), the address it goes out from, each
 * lane's limits and warm-up allowance, what replies did to a lane, and which groups a claim may
 * take from. What every process must see is in the database (`shapingRepo`): domains' groups,
 * suspensions and throttles (re-read every second), warm-up counts, and on PostgreSQL the
 * pacing of per-minute limits. Connections per lane are capped by the transport's pool.
 */
export class Shaper {
  private readonly providers: ProviderRule[];
  private readonly rules: CompiledReplyRule[];
  private readonly sources: SourceAddress[];
  private readonly states = new Map<string, GroupState>();
  /** Recipients in flight per lane key, and per group. */
  private readonly inFlight = new Map<string, number>();
  /** A paced lane's next free slot, as this worker last saw it. */
  private readonly nextSlot = new Map<string, { at: number; interval: number }>();
  /** When this process last started a paced message on each lane. */
  private readonly lastStart = new Map<string, number>();
  private readonly warmup: WarmupLedger;
  private readonly health: SourceHealth;
  private readonly domains: DomainGroups;
  private readonly log: Logger;
  private turn = 0;
  /** Recipients waiting for their pacing slot now. */
  private pacing = 0;
  /** Standing holds that name a group (queue control), re-read with the states. */
  private holds: GroupHold[] = [];

  constructor(private readonly deps: ShaperDeps) {
    const shaping = deps.config.shaping;
    this.providers = [...shaping.providers, ...BUILT_IN_PROVIDERS];
    this.rules = [...compileReplyRules(shaping.rules), ...compileReplyRules(BUILT_IN_REPLY_RULES)];
    this.sources = deps.config.delivery.sourceAddresses;
    this.log = deps.log.child({ phase: 'shaping' });
    this.domains = new DomainGroups(deps.db, this.log);
    this.warmup = new WarmupLedger(deps.db, deps.config.delivery.warmup);
    this.health = new SourceHealth(this.log, () => this.publish(this.deps.clock.now()));
  }

  /** The group of a recipient domain whose MX hosts are `hosts` (most preferred first). */
  groupOf(domain: string, hosts: string[]): string {
    const group = groupOf(hosts, this.providers);
    this.domains.record(domain, group, this.deps.clock.now());
    return group;
  }

  /**
   * The standing hold on `group` that covers a recipient, if any. The claim skips what holds
   * cover, but a domain no delivery had resolved yet was in no group then; once the worker
   * knows its group, this catches it, and the hold's sweep takes the row a moment later.
   */
  holdOn(group: string, row: { workspace_id: number; domain: string; message_id: number }, message: { stream: string; domain: string }): GroupHold | null {
    for (const h of this.holds) {
      if (h.group !== group) continue;
      if (h.workspaceId !== null && h.workspaceId !== row.workspace_id) continue;
      if (h.domain !== null && h.domain !== row.domain) continue;
      if (h.messageId !== null && h.messageId !== row.message_id) continue;
      if (h.stream !== null && h.stream !== message.stream) continue;
      if (h.sendingDomain !== null && h.sendingDomain !== message.domain) continue;
      return h;
    }
    return null;
  }

  /** Recipients waiting for a pacing slot: like those waiting for their render, they hold no claim slot. */
  get waiting(): number {
    return this.pacing;
  }

  /** The group a claim names a domain's rows by: as recorded, else a group of its own (`domain:`, as the claim says). */
  knownGroup(domain: string): string {
    return this.domains.known(domain);
  }

  /** The lane's limits now: a throttled lane has half its connections and half its rate. */
  limits(lane: Lane): ShapingLimits {
    const base = limitsOf(lane.group, this.deps.config.shaping.defaults, this.providers);
    if (!this.throttled(lane.key, this.deps.clock.now())) return base;
    return { ...base, connections: Math.max(1, Math.floor(base.connections / 2)) };
  }

  /**
   * The lane a recipient of `group` starts on, from the addresses of its pool (none: the
   * kernel's choice): an address that is in service, whose lane is not suspended and has warm-up
   * allowance left today, the least busy first. When none can, the recipient waits for the
   * first that will. `done` when its transaction has ended (claims count what is in flight).
   */
  enter(group: string, pool: readonly SourceAddress[]): Admission {
    const now = this.deps.clock.now();
    if (pool.length === 0) {
      const suspended = this.suspendedUntil(group, now);
      if (suspended !== null) return { kind: 'wait', until: suspended, reason: this.states.get(group)?.reason ?? 'suspended', why: 'suspended' };
      return this.go({ group, source: null, key: group });
    }
    let best: Lane | null = null;
    let bestLoad = Infinity;
    let wait: Extract<Admission, { kind: 'wait' }> | null = null;
    const start = this.turn++ % pool.length;
    for (let i = 0; i < pool.length; i++) {
      const source = pool[(start + i) % pool.length]!;
      const lane = { group, source, key: laneKey(group, source) };
      const blocked = this.blocked(lane, now);
      if (blocked) {
        if (!wait || blocked.until < wait.until) wait = blocked;
        continue;
      }
      const load = this.inFlight.get(lane.key) ?? 0;
      if (load < bestLoad) {
        best = lane;
        bestLoad = load;
      }
    }
    return best ? this.go(best) : wait!;
  }

  /**
   * Called with a connection ready, right before MAIL FROM: null when the message may go now,
   * else why not. A suspended lane stops here too; a warming address counts the message against
   * today's allowance (in the database, so every process shares it); with a per-minute limit the
   * message takes the lane's next pacing slot and waits for it when it is near (the receiver then
   * sees the messages `interval` apart however long each waited for its connection), or gives way.
   */
  async pace(lane: Lane): Promise<string | null> {
    const now = this.deps.clock.now();
    if (this.suspendedUntil(lane.key, now) !== null) return `${lane.key} is suspended: ${this.states.get(lane.key)?.reason ?? ''}`;
    // The pacing slot first: a slot given up costs a moment of rate, a warm-up count given up a message of the day.
    const paced = await this.takeSlot(lane, now);
    if (paced) return paced;
    return lane.source ? this.warmup.take(lane.source.address, lane.group, this.deps.clock.now()) : null;
  }

  /** The lane's next pacing slot, waited for; a reason when none is near. */
  private async takeSlot(lane: Lane, now: number): Promise<string | null> {
    const { perMinute } = limitsOf(lane.group, this.deps.config.shaping.defaults, this.providers);
    if (perMinute === null) return null;
    const interval = pacingInterval(perMinute, this.throttled(lane.key, now));
    const slot = await this.deps.pacer.take(lane.key, interval, now, HORIZON_MS);
    this.nextSlot.set(lane.key, { at: slot.start + slot.granted * interval, interval });
    if (slot.granted === 0) return `${lane.key} is at its limit of ${perMinute} messages a minute`;
    // The slot, and never sooner than half an interval after this process's previous start on
    // the lane: a timer that fired late (a busy event loop) must not bunch messages together,
    // while the next, on time, keeps its own slot (a whole interval would carry each delay on).
    for (;;) {
      const at = Math.max(slot.start, (this.lastStart.get(lane.key) ?? 0) + interval / 2);
      const wait = at - this.deps.clock.now();
      if (wait <= 0) break;
      this.pacing++;
      this.deps.changed?.();
      await new Promise((resolve) => setTimeout(resolve, wait));
      this.pacing--;
      this.deps.changed?.();
    }
    this.lastStart.set(lane.key, this.deps.clock.now());
    if (this.lastStart.size > 10_000) this.lastStart.delete(this.lastStart.keys().next().value!);
    return null;
  }

  /**
   * When a recipient that `pace` turned away may try again: in a second through another lane of
   * its pool that can take it, else when the first of them can.
   */
  resumeAt(lane: Lane, pool: readonly SourceAddress[]): number {
    const now = this.deps.clock.now();
    const own = Math.max(now, this.blocked(lane, now)?.until ?? 0, this.nextSlot.get(lane.key)?.at ?? 0);
    let soonest = own;
    for (const source of pool) {
      if (source.address === lane.source?.address) continue;
      const other = { group: lane.group, source, key: laneKey(lane.group, source) };
      soonest = Math.min(soonest, this.blocked(other, now)?.until ?? now + 1000);
    }
    return soonest;
  }

  /** The shaping rule a failed reply matches (configured rules first, then the built-ins), or null. */
  ruleFor(response: string): CompiledReplyRule | null {
    return matchReply(this.rules, response);
  }

  /**
   * What a reply that matched `rule` does to its lane: `suspend` stops the lane (every process,
   * within a second) and, without sending addresses, moves its due mail to when it resumes;
   * `throttle` halves its connections and rate; `pause-address` takes the address out of every
   * pool; each of them, and `reconnect-later`, puts the recipient back without counting an attempt.
   */
  async apply(lane: Lane, rule: CompiledReplyRule, response: string): Promise<ShapedReply> {
    const now = this.deps.clock.now();
    const until = now + rule.seconds * 1000;
    this.deps.metrics.shapingReplies.inc({ group: lane.group, action: rule.action });
    const reason = response.slice(0, 300);
    if (rule.action === 'suspend') {
      // Many transactions of a lane draw the same reply at once; one of them writes it.
      if ((this.suspendedUntil(lane.key, now) ?? 0) < until - 1000) {
        this.setState(lane.key, { suspendedUntil: until, reason });
        const moved = await shapingRepo.suspend(this.deps.db, lane.key, until, reason, now, lane.source === null ? lane.group : null);
        this.log.warn(
          { group: lane.group, source: lane.source?.address, until: new Date(until).toISOString(), moved, reply: reason },
          `${lane.key} suspended for ${rule.seconds} s: ${reason}`,
        );
      }
      return { action: rule.action, until, reason };
    }
    if (rule.action === 'throttle') {
      if (!this.throttled(lane.key, until - 1000)) {
        this.setState(lane.key, { throttledUntil: until, reason });
        await shapingRepo.throttle(this.deps.db, lane.key, until, reason, now);
        this.log.warn(
          { group: lane.group, source: lane.source?.address, until: new Date(until).toISOString(), reply: reason },
          `${lane.key} throttled to half its rate for ${rule.seconds} s: ${reason}`,
        );
      }
      return { action: rule.action, until: now + 1000, reason };
    }
    if (rule.action === 'pause-address') {
      if (lane.source) this.health.takeOut(lane.source.address, until, `the reply ${reason}`);
      return { action: rule.action, until: lane.source && this.sources.length > 1 ? now + 1000 : until, reason };
    }
    return { action: rule.action, until, reason };
  }

  /**
   * What an attempt's end says about its sending address (`SourceHealth.observe`): a reason when
   * the recipient should go through another address rather than count an attempt.
   */
  observe(lane: Lane, result: AttemptEnd): string | null {
    return lane.source ? this.health.observe(lane.source.address, lane.group, result, this.deps.clock.now(), this.sources.length > 1) : null;
  }

  /** Reads what other processes (and earlier runs) did to lanes; called about once a second. */
  async refresh(): Promise<void> {
    const now = this.deps.clock.now();
    const active = await shapingRepo.activeStates(this.deps.db, now);
    this.holds = await queueControlRepo.groupHolds(this.deps.db);
    const seen = new Set(active.map((s) => s.name));
    for (const state of active) this.states.set(state.name, state);
    for (const [name, state] of this.states) {
      if (!seen.has(name) && (state.suspendedUntil ?? 0) <= now && (state.throttledUntil ?? 0) <= now) this.states.delete(name);
    }
    this.health.returnDue(now);
    this.warmup.forgetBefore(now);
    this.publish(now);
  }

  /** Groups as a claim should treat them now: a group is left out when none of its lanes can send. */
  claimShape(): ClaimShape {
    const now = this.deps.clock.now();
    const lanesOf = (group: string): Lane[] =>
      this.sources.length === 0 ? [{ group, source: null, key: group }] : this.sources.map((source) => ({ group, source, key: laneKey(group, source) }));
    const groups = new Set<string>();
    for (const key of [...this.states.keys(), ...this.inFlight.keys(), ...this.nextSlot.keys()]) groups.add(key.split('@')[0]!);
    const exclude: string[] = [];
    const caps: [string, number][] = [];
    for (const group of groups) {
      let cap = 0;
      for (const lane of lanesOf(group)) {
        if (this.blocked(lane, now)) continue;
        let room = CLAIMED_PER_CONNECTION * this.limits(lane).connections - (this.inFlight.get(lane.key) ?? 0);
        const paced = this.nextSlot.get(lane.key);
        if (paced && paced.at <= now) this.nextSlot.delete(lane.key);
        else if (paced) room = Math.min(room, Math.floor((now + HORIZON_MS - paced.at) / paced.interval) + 1);
        cap += Math.max(0, room);
      }
      if (cap <= 0) exclude.push(group);
      else caps.push([group, cap]);
    }
    const perLane = CLAIMED_PER_CONNECTION * this.deps.config.shaping.defaults.connections;
    return { exclude, caps, defaultCap: perLane * Math.max(1, this.sources.length) };
  }

  /** Lanes suspended or throttled now, as this worker knows them. */
  active(): GroupState[] {
    const now = this.deps.clock.now();
    return [...this.states.values()].filter((s) => (s.suspendedUntil ?? 0) > now || (s.throttledUntil ?? 0) > now);
  }

  close(): Promise<void> {
    return this.domains.close();
  }

  /** Why a lane cannot take a message now, and until when; null when it can. */
  private blocked(lane: Lane, now: number): Extract<Admission, { kind: 'wait' }> | null {
    const suspended = this.suspendedUntil(lane.key, now);
    if (suspended !== null) return { kind: 'wait', until: suspended, reason: `${lane.key} is suspended: ${this.states.get(lane.key)?.reason ?? ''}`, why: 'suspended' };
    if (!lane.source) return null;
    const out = this.health.outNow(lane.source.address, now);
    if (out) return { kind: 'wait', until: out.until, reason: `${lane.source.address} is out of its pools: ${out.reason}`, why: 'address' };
    const spent = this.warmup.spent(lane.source.address, lane.group, now);
    return spent ? { kind: 'wait', ...spent, why: 'warmup' } : null;
  }

  private go(lane: Lane): Admission {
    this.count(lane.key, 1);
    let finished = false;
    return {
      kind: 'go',
      lane,
      done: () => {
        if (finished) return;
        finished = true;
        this.count(lane.key, -1);
      },
    };
  }

  private suspendedUntil(key: string, now: number): number | null {
    const until = this.states.get(key)?.suspendedUntil ?? null;
    return until !== null && until > now ? until : null;
  }

  private throttled(key: string, now: number): boolean {
    return (this.states.get(key)?.throttledUntil ?? 0) > now;
  }

  private setState(key: string, change: Partial<GroupState>): void {
    const state = this.states.get(key) ?? { name: key, suspendedUntil: null, reason: null, throttledUntil: null };
    this.states.set(key, { ...state, ...change });
    this.publish(this.deps.clock.now());
  }

  private publish(now: number): void {
    const { shapingSuspended, shapingThrottled, sourceAddressOut } = this.deps.metrics;
    shapingSuspended.reset();
    shapingThrottled.reset();
    for (const s of this.states.values()) {
      if ((s.suspendedUntil ?? 0) > now) shapingSuspended.set({ group: s.name }, Math.round(s.suspendedUntil! / 1000));
      if ((s.throttledUntil ?? 0) > now) shapingThrottled.set({ group: s.name }, Math.round(s.throttledUntil! / 1000));
    }
    sourceAddressOut.reset();
    for (const [address, until] of this.health.allOut(now)) sourceAddressOut.set({ address }, Math.round(until / 1000));
  }

  private count(key: string, delta: number): void {
    const n = (this.inFlight.get(key) ?? 0) + delta;
    if (n > 0) this.inFlight.set(key, n);
    else this.inFlight.delete(key);
  }
}
