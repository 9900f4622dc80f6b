import type { Config } from '../config/schema.ts';
import { Batcher } from '../core/batcher.ts';
import type { Clock, Logger } from '../core/ports.ts';
import type { Metrics } from '../metrics/registry.ts';
import { groupOf, limitsOf } from '../shaping/groups.ts';
import { pacingInterval } from '../shaping/pacing.ts';
import { BUILT_IN_PROVIDERS } from '../shaping/providers.ts';
import { BUILT_IN_REPLY_RULES, compileReplyRules, matchReply, type CompiledReplyRule } from '../shaping/reply-rules.ts';
import type { ProviderRule, ShapingAction, ShapingLimits } from '../shaping/types.ts';
import type { Db } from '../store/db.ts';
import { shapingRepo, type GroupState } from '../store/shaping.ts';
import type { Pacer } from './pacer.ts';

export interface ShaperDeps {
  config: Config;
  db: Db;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  pacer: Pacer;
}

/** Whether a recipient of a group may be sent now; `done` when its transaction has ended. */
export type Admission = { kind: 'go'; done: () => void } | { kind: 'wait'; until: number; reason: string; why: 'suspended' | 'paced' };

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
/** Rows a group may have claimed per connection: one sending, one ready behind it. */
const CLAIMED_PER_CONNECTION = 2;

/**
 * A delivery worker's view of traffic shaping (SPEC §11): each recipient domain's destination
 * group (from its MX hosts), each group's limits, what replies did to a group, and which groups
 * a claim may take from. The state every process must see is in the database (`shapingRepo`):
 * domains' groups, suspensions and throttles (re-read every second), and on PostgreSQL the
 * pacing of per-minute limits. Connections per group are capped by the transport's pool.
 */
export class Shaper {
  private readonly providers: ProviderRule[];
  private readonly rules: CompiledReplyRule[];
  private readonly states = new Map<string, GroupState>();
  private readonly inFlight = new Map<string, number>();
  /** A paced group's next free slot, as this worker last saw it. */
  private readonly nextSlot = new Map<string, { at: number; interval: number }>();
  private readonly recorded = new Map<string, { group: string; at: number }>();
  private readonly domains: Batcher<{ domain: string; group: string; expiresAt: number }, void>;
  private readonly log: Logger;

  constructor(private readonly deps: ShaperDeps) {
    const shaping = deps.config.shaping;
    this.providers = [...shaping.providers, ...BUILT_IN_PROVIDERS];
    this.rules = [...compileReplyRules(shaping.rules), ...compileReplyRules(BUILT_IN_REPLY_RULES)];
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

  /** The group's limits now: a throttled group has half its connections and half its rate. */
  limits(group: string): ShapingLimits {
    const base = limitsOf(group, this.deps.config.shaping.defaults, this.providers);
    if (!this.throttled(group, this.deps.clock.now())) return base;
    return { ...base, connections: Math.max(1, Math.floor(base.connections / 2)) };
  }

  /**
   * Whether a recipient of `group` may start now: not while the group is suspended. `done` when
   * its transaction has ended (claims count what each group has in flight).
   */
  enter(group: string): Admission {
    const now = this.deps.clock.now();
    const suspended = this.suspendedUntil(group, now);
    if (suspended !== null) return { kind: 'wait', until: suspended, reason: this.states.get(group)?.reason ?? 'suspended', why: 'suspended' };
    this.count(group, 1);
    let finished = false;
    return {
      kind: 'go',
      done: () => {
        if (finished) return;
        finished = true;
        this.count(group, -1);
      },
    };
  }

  /**
   * Called with a connection ready, right before MAIL FROM: null when the message may go now,
   * else why not. A suspended group stops here too; with a per-minute limit the message takes
   * the group's next pacing slot and waits for it when it is near (the receiver then sees the
   * messages `interval` apart however long each waited for its connection), or gives way.
   */
  async pace(group: string): Promise<string | null> {
    const now = this.deps.clock.now();
    if (this.suspendedUntil(group, now) !== null) return `${group} is suspended: ${this.states.get(group)?.reason ?? ''}`;
    const { perMinute } = limitsOf(group, this.deps.config.shaping.defaults, this.providers);
    if (perMinute === null) return null;
    const interval = pacingInterval(perMinute, this.throttled(group, now));
    const slot = await this.deps.pacer.take(group, interval, now, HORIZON_MS);
    this.nextSlot.set(group, { at: slot.start + slot.granted * interval, interval });
    if (slot.granted === 0) return `${group} is at its limit of ${perMinute} messages a minute`;
    const wait = slot.start - this.deps.clock.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    return null;
  }

  /** When a recipient that `pace` or `enter` turned away may try again. */
  resumeAt(group: string): number {
    const now = this.deps.clock.now();
    return Math.max(now, this.suspendedUntil(group, now) ?? 0, this.nextSlot.get(group)?.at ?? 0);
  }

  /** The shaping rule a failed reply matches (configured rules first, then the built-ins), or null. */
  ruleFor(response: string): CompiledReplyRule | null {
    return matchReply(this.rules, response);
  }

  /**
   * What a reply that matched `rule` does to its group: `suspend` stops the group (every
   * process, within a second) and moves its due mail to when it resumes; `throttle` halves its
   * connections and rate; both, and `reconnect-later`, put the recipient back without counting
   * an attempt.
   */
  async apply(group: string, rule: CompiledReplyRule, response: string): Promise<ShapedReply> {
    const now = this.deps.clock.now();
    const until = now + rule.seconds * 1000;
    this.deps.metrics.shapingReplies.inc({ group, action: rule.action });
    const reason = response.slice(0, 300);
    if (rule.action === 'suspend') {
      // Many transactions of a group draw the same reply at once; one of them writes it.
      if ((this.suspendedUntil(group, now) ?? 0) < until - 1000) {
        this.setState(group, { suspendedUntil: until, reason });
        const moved = await shapingRepo.suspend(this.deps.db, group, until, reason, now);
        this.log.warn({ group, until: new Date(until).toISOString(), moved, reply: reason }, `${group} suspended for ${rule.seconds} s: ${reason}`);
      }
      return { action: rule.action, until, reason };
    }
    if (rule.action === 'throttle') {
      if (!this.throttled(group, until - 1000)) {
        this.setState(group, { throttledUntil: until, reason });
        await shapingRepo.throttle(this.deps.db, group, until, reason, now);
        this.log.warn({ group, until: new Date(until).toISOString(), reply: reason }, `${group} throttled to half its rate for ${rule.seconds} s: ${reason}`);
      }
      return { action: rule.action, until: now + 1000, reason };
    }
    return { action: rule.action, until, reason };
  }

  /** Reads what other processes (and earlier runs) did to groups; called about once a second. */
  async refresh(): Promise<void> {
    const now = this.deps.clock.now();
    const active = await shapingRepo.activeStates(this.deps.db, now);
    const seen = new Set(active.map((s) => s.name));
    for (const state of active) this.states.set(state.name, state);
    for (const [name, state] of this.states) {
      if (!seen.has(name) && (state.suspendedUntil ?? 0) <= now && (state.throttledUntil ?? 0) <= now) this.states.delete(name);
    }
    this.publish(now);
  }

  /** Groups as a claim should treat them now. */
  claimShape(): ClaimShape {
    const now = this.deps.clock.now();
    const exclude: string[] = [];
    const caps: [string, number][] = [];
    for (const [group] of this.states) if (this.suspendedUntil(group, now) !== null) exclude.push(group);
    const groups = new Set([...this.inFlight.keys(), ...this.nextSlot.keys()]);
    for (const group of groups) {
      if (this.suspendedUntil(group, now) !== null) continue;
      let cap = CLAIMED_PER_CONNECTION * this.limits(group).connections - (this.inFlight.get(group) ?? 0);
      const paced = this.nextSlot.get(group);
      if (paced) {
        if (paced.at <= now) this.nextSlot.delete(group);
        else cap = Math.min(cap, Math.floor((now + HORIZON_MS - paced.at) / paced.interval) + 1);
      }
      if (cap <= 0) exclude.push(group);
      else caps.push([group, cap]);
    }
    return { exclude, caps, defaultCap: CLAIMED_PER_CONNECTION * this.deps.config.shaping.defaults.connections };
  }

  /** Groups suspended or throttled now, as this worker knows them. */
  active(): GroupState[] {
    const now = this.deps.clock.now();
    return [...this.states.values()].filter((s) => (s.suspendedUntil ?? 0) > now || (s.throttledUntil ?? 0) > now);
  }

  close(): Promise<void> {
    return this.domains.close();
  }

  private suspendedUntil(group: string, now: number): number | null {
    const until = this.states.get(group)?.suspendedUntil ?? null;
    return until !== null && until > now ? until : null;
  }

  private throttled(group: string, now: number): boolean {
    return (this.states.get(group)?.throttledUntil ?? 0) > now;
  }

  private setState(group: string, change: Partial<GroupState>): void {
    const state = this.states.get(group) ?? { name: group, suspendedUntil: null, reason: null, throttledUntil: null };
    this.states.set(group, { ...state, ...change });
    this.publish(this.deps.clock.now());
  }

  private publish(now: number): void {
    const { shapingSuspended, shapingThrottled } = this.deps.metrics;
    shapingSuspended.reset();
    shapingThrottled.reset();
    for (const s of this.states.values()) {
      if ((s.suspendedUntil ?? 0) > now) shapingSuspended.set({ group: s.name }, Math.round(s.suspendedUntil! / 1000));
      if ((s.throttledUntil ?? 0) > now) shapingThrottled.set({ group: s.name }, Math.round(s.throttledUntil! / 1000));
    }
  }

  private count(group: string, delta: number): void {
    const n = (this.inFlight.get(group) ?? 0) + delta;
    if (n > 0) this.inFlight.set(group, n);
    else this.inFlight.delete(group);
  }
}
