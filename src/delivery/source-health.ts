import type { Logger } from '../core/ports.ts';
import { isBlocklistReply } from '../shaping/blocklists.ts';

/** Connect failures towards this many different groups in a row, none succeeding, take an address out. */
const FAILING_GROUPS = 3;
const ADDRESS_OUT_MS = 5 * 60_000;
const BLOCKLISTED_MS = 60 * 60_000;

/** How an attempt through a sending address ended, as the transport tells it. */
export interface AttemptEnd {
  ok: boolean;
  code: number | null;
  stage?: string;
  response: string;
}

/**
 * Which sending addresses (SPEC §12) are out of their pools, until when and why, as this worker
 * found from its own attempts: `changed` is told whenever one goes out or comes back.
 */
export class SourceHealth {
  private readonly out = new Map<string, { until: number; reason: string }>();
  /** Per address: the groups its connections failed to reach since its last success. */
  private readonly failing = new Map<string, Set<string>>();

  constructor(
    private readonly log: Logger,
    private readonly changed: () => void,
  ) {}

  /** Until when, and why, `address` is out of its pools now; null when it is in. */
  outNow(address: string, now: number): { until: number; reason: string } | null {
    const out = this.out.get(address);
    return out && out.until > now ? out : null;
  }

  /** Each address out of its pools now, with the end of its time out. */
  *allOut(now: number): Iterable<[address: string, until: number]> {
    for (const [address, o] of this.out) if (o.until > now) yield [address, o.until];
  }

  /** Takes `address` out of its pools until `until`, unless it is out for longer already. */
  takeOut(address: string, until: number, reason: string): void {
    const current = this.out.get(address);
    if (current && current.until >= until) return;
    this.out.set(address, { until, reason });
    this.log.warn({ source: address, until: new Date(until).toISOString() }, `${address} is out of its pools until ${new Date(until).toISOString()}: ${reason}`);
    this.changed();
  }

  /**
   * What an attempt's end says about its sending address: a blocklist reply takes it out of its
   * pools for an hour; connect failures towards several groups in a row, with no success in
   * between, for five minutes (the address itself is the trouble, not one receiver). Returns a
   * reason when the recipient should go through another address rather than count an attempt
   * (`others`: whether the address has others beside it to go through).
   */
  observe(address: string, group: string, result: AttemptEnd, now: number, others: boolean): string | null {
    if (result.ok || result.code !== null) this.failing.delete(address);
    if (!result.ok && result.code !== null && isBlocklistReply(result.response)) {
      this.takeOut(address, now + BLOCKLISTED_MS, `a blocklist reply: ${result.response.slice(0, 200)}`);
      return others ? `${address} is blocklisted: ${result.response.slice(0, 200)}` : null;
    }
    // The address cannot be bound here (not on this machine, or gone): nothing was said to anyone.
    if (!result.ok && result.code === null && /\bEADDRNOTAVAIL\b/.test(result.response)) {
      this.takeOut(address, now + ADDRESS_OUT_MS, `it cannot be bound on this machine: ${result.response}`);
      return `${address} cannot be bound: ${result.response}`;
    }
    if (!result.ok && result.code === null && result.stage === 'connect') {
      const groups = this.failing.get(address) ?? new Set<string>();
      groups.add(group);
      this.failing.set(address, groups);
      if (groups.size >= FAILING_GROUPS) {
        this.failing.delete(address);
        this.takeOut(address, now + ADDRESS_OUT_MS, `connections from it failed towards ${FAILING_GROUPS} groups in a row: ${result.response}`);
      }
    }
    return null;
  }

  /** Puts back in their pools the addresses whose time out has ended. */
  returnDue(now: number): void {
    for (const [address, o] of this.out) {
      if (o.until > now) continue;
      this.out.delete(address);
      this.log.info({ source: address }, `${address} is back in its pools`);
    }
  }
}
