import { invalid } from '../core/errors.ts';
import type { Clock } from '../core/ports.ts';
import type { Db } from '../store/db.ts';
import { usageRepo } from '../store/usage.ts';

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Midnight UTC of a calendar day from 1970-01-01 to 9999-12-31, or null (2026-02-31 is null). */
function dayStart(text: string): number | null {
  const m = DAY.exec(text);
  if (!m) return null;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const ms = Date.UTC(year, month - 1, day);
  return year >= 1970 && dayOf(ms) === text ? ms : null;
}

/** Billable recipients per day and stream; suppressed recipients are never counted. */
export class UsageService {
  constructor(private readonly deps: { db: Db; clock: Clock }) {}

  async report(workspaceId: number, range: { from?: string; to?: string }) {
    for (const name of ['from', 'to'] as const) {
      const v = range[name];
      if (v !== undefined && dayStart(v) === null) {
        throw invalid(`Query parameter \`${name}\` must be a calendar date from 1970-01-01 to 9999-12-31, like 2026-11-21`);
      }
    }
    const to = range.to ?? dayOf(this.deps.clock.now());
    const from = range.from ?? dayOf(Math.max(0, dayStart(to)! - 29 * 86_400_000));
    if (from > to) throw invalid('Query parameter `from` must not be after `to`');
    const data = await usageRepo.list(this.deps.db, workspaceId, from, to);
    const totals = { transactional: 0, broadcast: 0 };
    for (const row of data) totals[row.stream as keyof typeof totals] += row.count;
    return { from, to, data, totals };
  }
}
