/** An address's warm-up plan (`delivery.warmup`): from the UTC day `start`, day k allows `schedule[k]` per group. */
export interface WarmupPlan {
  start: string;
  schedule: number[];
}

const DAY_MS = 86_400_000;

/**
 * Messages the address may send to each destination group on the UTC day of `now`: the
 * schedule's number for the day since `start` (the last repeats); none before `start`, so an
 * address planned for next week stays quiet until then.
 */
export function warmupAllowance(plan: WarmupPlan, now: number): number {
  const day = Math.floor(now / DAY_MS) - Math.floor(Date.parse(`${plan.start}T00:00:00Z`) / DAY_MS);
  if (day < 0) return 0;
  return plan.schedule[Math.min(day, plan.schedule.length - 1)]!;
}
