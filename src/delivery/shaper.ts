import type { Config } from '../config/schema.ts';
import { Batcher } from '../core/batcher.ts';
import type { Clock, Logger } from '../core/ports.ts';
import type { Metrics } from '../metrics/registry.ts';
import { isBlocklistReply } from '../shaping/blocklists.ts';
import { groupOf, limitsOf } from '../shaping/groups.ts';
import { pacingInterval } from '../shaping/pacing.ts';
import { BUILT_IN_PROVIDERS } from '../shaping/providers.ts';
import { BUILT_IN_REPLY_RULES, compileReplyRules, matchReply, type CompiledReplyRule } from '../shaping/reply-rules.ts';
import type { ProviderRule, ShapingAction, ShapingLimits } from '../shaping/types.ts';
import { warmupAllowance } from '../shaping/warmup.ts';
import type { Db } from '../store/db.ts';
import { queueControlRepo, type GroupHold } from '../store/queue-control.ts';
import { shapingRepo, type GroupState } from '../store/shaping.ts';
import type { Pacer } from './pacer.ts';

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
/** How long a domain's recorded group is trusted before it is written again (its MX may move). */
const DOMAIN_RECORD_MS = 3_600_000;
/** Rows a lane may have claimed per connection: one sending, some being signed behind it. */
const CLAIMED_PER_CONNECTION = 4;
/** Connect failures towards this many different groups in a row, none succeeding, take an address out. */
const FAILING_GROUPS = 3;
const ADDRESS_OUT_MS = 5 * 60_000;
const BLOCKLISTED_MS = 60 * 60_000;
const DAY_MS = 86_400_000;

const laneKey = (group: string, source: SourceAddress | null): string => (source ? `${group}@${source.address}` : group);
const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

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
  /** Warm-up messages counted per `address|group|day`, as this worker last saw them. */
  private readonly warmed = new Map<string, number>();
  /** Addresses out of their pools until then, and why. */
  private readonly out = new Map<string, { until: number; reason: string }>();
  /** Per address: the groups its connections failed to reach since its last success. */
  private readonly failing = new Map<string, Set<string>>();
  private readonly recorded = new Map<string, { group: string; at: number }>();
  private readonly domains: Batcher<{ domain: string; group: string; expiresAt: number }, void>;
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
    this.domains = new Batcher({
      name: 'the domain groups',
      maxInFlight: 1,
      start: 'immediate',
      write: async (batch) => {
        const rows = batch.take();
        await shapingRepo.recordDomains(deps.db, rows).catch((err: unknown) => {
          // Only claims' exclusions and statistics read it; the next sighting writes it again.
          for (const r of rows) this.recorded.delete(r.domain);
          this.log.warn({ err }, 'could not record destination groups');
        });
      },
    });
  }

  /** The group of a recipient domain whose MX hosts are `hosts` (most preferred first). */
  groupOf(domain: string, hosts: string[]): string {
    const group = groupOf(hosts, this.providers);
    const now = this.deps.clock.now();
    const known = this.recorded.get(domain);
    if (!known || known.group !== group || known.at + DOMAIN_RECORD_MS < now) {
      this.recorded.set(domain, { group, at: now });
      if (this.recorded.size > 100_000) this.recorded.delete(this.recorded.keys().next().value!);
      void this.domains.add({ domain, group, expiresAt: now + DOMAIN_RECORD_MS }).catch(() => undefined);
    }
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
    return this.recorded.get(domain)?.group ?? `domain:${domain}`;
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
    return lane.source ? this.takeWarmup(lane, this.deps.clock.now()) : null;
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
      if (lane.source) this.takeOut(lane.source.address, until, `the reply ${reason}`);
      return { action: rule.action, until: lane.source && this.sources.length > 1 ? now + 1000 : until, reason };
    }
    return { action: rule.action, until, reason };
  }

  /**
   * What an attempt's end says about its sending address: a blocklist reply takes it out of its
   * pools for an hour; connect failures towards several groups in a row, with no success in
   * between, for five minutes (the address itself is the trouble, not one receiver). Returns a
   * reason when the recipient should go through another address rather than count an attempt.
   */
  observe(lane: Lane, result: { ok: boolean; code: number | null; stage?: string; response: string }): string | null {
    const source = lane.source;
    if (!source) return null;
    if (result.ok || result.code !== null) this.failing.delete(source.address);
    if (!result.ok && result.code !== null && isBlocklistReply(result.response)) {
      this.takeOut(source.address, this.deps.clock.now() + BLOCKLISTED_MS, `a blocklist reply: ${result.response.slice(0, 200)}`);
      return this.sources.length > 1 ? `${source.address} is blocklisted: ${result.response.slice(0, 200)}` : null;
    }
    // The address cannot be bound here (not on this machine, or gone): nothing was said to anyone.
    if (!result.ok && result.code === null && /\bEADDRNOTAVAIL\b/.test(result.response)) {
      this.takeOut(source.address, this.deps.clock.now() + ADDRESS_OUT_MS, `it cannot be bound on this machine: ${result.response}`);
      return `${source.address} cannot be bound: ${result.response}`;
    }
    if (!result.ok && result.code === null && result.stage === 'connect') {
      const groups = this.failing.get(source.address) ?? new Set<string>();
      groups.add(lane.group);
      this.failing.set(source.address, groups);
      if (groups.size >= FAILING_GROUPS) {
        this.failing.delete(source.address);
        this.takeOut(source.address, this.deps.clock.now() + ADDRESS_OUT_MS, `connections from it failed towards ${FAILING_GROUPS} groups in a row: ${result.response}`);
      }
    }
    return null;
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
    for (const [address, o] of this.out) {
      if (o.until <= now) {
        this.out.delete(address);
        this.log.info({ source: address }, `${address} is back in its pools`);
      }
    }
    const today = utcDay(now);
    for (const key of this.warmed.keys()) if (!key.endsWith(today)) this.warmed.delete(key);
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
    const out = this.out.get(lane.source.address);
    if (out && out.until > now) return { kind: 'wait', until: out.until, reason: `${lane.source.address} is out of its pools: ${out.reason}`, why: 'address' };
    const allowance = this.allowance(lane.source.address, now);
    if (allowance !== null && (this.warmed.get(`${lane.source.address}|${lane.group}|${utcDay(now)}`) ?? 0) >= allowance) {
      return { kind: 'wait', until: (Math.floor(now / DAY_MS) + 1) * DAY_MS, reason: this.warmupReason(lane, allowance), why: 'warmup' };
    }
    return null;
  }

  /** Today's warm-up allowance of an address per group, or null when it is not warming up. */
  private allowance(address: string, now: number): number | null {
    const plan = this.deps.config.delivery.warmup[address];
    return plan ? warmupAllowance(plan, now) : null;
  }

  private warmupReason(lane: Lane, allowance: number): string {
    return `warm-up: ${lane.source!.address} has sent today's ${allowance} to ${lane.group} (delivery.warmup); the rest waits for another address of the pool or the next UTC day`;
  }

  /** Counts one message against the lane's warm-up allowance today; a reason when none is left. */
  private async takeWarmup(lane: Lane, now: number): Promise<string | null> {
    const address = lane.source!.address;
    const allowance = this.allowance(address, now);
    if (allowance === null) return null;
    const day = utcDay(now);
    const key = `${address}|${lane.group}|${day}`;
    const count = allowance === 0 ? null : await shapingRepo.takeWarmup(this.deps.db, address, lane.group, day, allowance);
    this.warmed.set(key, count ?? allowance);
    return count === null ? this.warmupReason(lane, allowance) : null;
  }

  private takeOut(address: string, until: number, reason: string): void {
    const current = this.out.get(address);
    if (current && current.until >= until) return;
    this.out.set(address, { until, reason });
    this.log.warn({ source: address, until: new Date(until).toISOString() }, `${address} is out of its pools until ${new Date(until).toISOString()}: ${reason}`);
    this.publish(this.deps.clock.now());
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
    for (const [address, o] of this.out) if (o.until > now) sourceAddressOut.set({ address }, Math.round(o.until / 1000));
  }

  private count(key: string, delta: number): void {
    const n = (this.inFlight.get(key) ?? 0) + delta;
    if (n > 0) this.inFlight.set(key, n);
    else this.inFlight.delete(key);
  }
}
