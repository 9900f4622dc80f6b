import { invalid } from '../core/errors.ts';
import type { Clock } from '../core/ports.ts';
import type { Db } from '../store/db.ts';
import { usageRepo } from '../store/usage.ts';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Billable recipients per day and stream; suppressed recipients are never counted. */
export class UsageService {
  constructor(private readonly deps: { db: Db; clock: Clock }) {}

  async report(workspaceId: number, range: { from?: string; to?: string }) {
    const to = range.to ?? dayOf(this.deps.clock.now());
    const from = range.from ?? dayOf(Date.parse(`${to}T00:00:00Z`) - 29 * 86_400_000);
    for (const [name, v] of [['from', from], ['to', to]] as const) {
      if (!DAY.test(v) || Number.isNaN(Date.parse(`${v}T00:00:00Z`))) throw invalid(`Field \`${name}\` must be a date like 2026-11-21`);
    }
    if (from > to) throw invalid('Field `from` must not be after `to`');
    const data = await usageRepo.list(this.deps.db, workspaceId, from, to);
    const totals = { transactional: 0, broadcast: 0 };
    for (const row of data) totals[row.stream as keyof typeof totals] += row.count;
    return { from, to, data, totals };
  }
}
