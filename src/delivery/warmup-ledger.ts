import type { Config } from '../config/schema.ts';
import { warmupAllowance } from '../shaping/warmup.ts';
import type { Db } from '../store/db.ts';
import { shapingRepo } from '../store/shaping.ts';

const DAY_MS = 86_400_000;

const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/**
 * Warm-up allowances of sending addresses (SPEC §12): how many messages an address may send to a
 * destination group on a UTC day, counted in the database so every process shares the count,
 * and what this worker last saw of each count.
 */
export class WarmupLedger {
  /** Messages counted per `address|group|day`, as this worker last saw them. */
  private readonly counted = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly plans: Config['delivery']['warmup'],
  ) {}

  /** When an address has sent its allowance to `group` today (as last seen): the next UTC day and why; else null. */
  spent(address: string, group: string, now: number): { until: number; reason: string } | null {
    const allowance = this.allowance(address, now);
    if (allowance === null || (this.counted.get(`${address}|${group}|${utcDay(now)}`) ?? 0) < allowance) return null;
    return { until: (Math.floor(now / DAY_MS) + 1) * DAY_MS, reason: reasonOf(address, group, allowance) };
  }

  /** Counts one message of `address` to `group` against today's allowance; a reason when none is left. */
  async take(address: string, group: string, now: number): Promise<string | null> {
    const allowance = this.allowance(address, now);
    if (allowance === null) return null;
    const day = utcDay(now);
    const count = allowance === 0 ? null : await shapingRepo.takeWarmup(this.db, address, group, day, allowance);
    this.counted.set(`${address}|${group}|${day}`, count ?? allowance);
    return count === null ? reasonOf(address, group, allowance) : null;
  }

  /** Forgets the counts of days before `now`'s. */
  forgetBefore(now: number): void {
    const today = utcDay(now);
    for (const key of this.counted.keys()) if (!key.endsWith(today)) this.counted.delete(key);
  }

  /** Today's allowance of an address per group, or null when it is not warming up. */
  private allowance(address: string, now: number): number | null {
    const plan = this.plans[address];
    return plan ? warmupAllowance(plan, now) : null;
  }
}

function reasonOf(address: string, group: string, allowance: number): string {
  return `warm-up: ${address} has sent today's ${allowance} to ${group} (delivery.warmup); the rest waits for another address of the pool or the next UTC day`;
}
