import { invalid } from '../core/errors.ts';
import type { Clock } from '../core/ports.ts';
import { iso } from '../core/time.ts';
import type { Db } from '../store/db.ts';
import { statsRepo } from '../store/stats.ts';
import type { Principal } from '../tenancy/principal.ts';

const DAY_MS = 86_400_000;
const MAX_DAYS = 90;

export const BOUNCE_TYPES = ['permanent', 'transient', 'blocked'] as const;
const COUNTED = {
  'email.delivered': 'delivered',
  'email.complained': 'complained',
  'email.opened': 'opened',
  'email.clicked': 'clicked',
  'email.unsubscribed': 'unsubscribed',
} as const;

export interface DayStats {
  day: string;
  stream: string;
  sent: number;
  delivered: number;
  bounced: Record<(typeof BOUNCE_TYPES)[number], number>;
  complained: number;
  opened: number;
  clicked: number;
  unsubscribed: number;
}

const empty = (day: string, stream: string): DayStats => ({
  day,
  stream,
  sent: 0,
  delivered: 0,
  bounced: { permanent: 0, transient: 0, blocked: 0 },
  complained: 0,
  opened: 0,
  clicked: 0,
  unsubscribed: 0,
});

/** What the overview shows: outcomes per day and stream, and the queue now. */
export class StatsService {
  constructor(private readonly deps: { db: Db; clock: Clock }) {}

  /**
   * One row per UTC day and stream for the last `days` days (today included), zeros where
   * nothing happened: sent recipients by the day they were accepted, outcomes by the day they
   * were recorded. A bounce of a kind outside the three known ones counts as transient.
   */
  async daily(principal: Principal, days = 30): Promise<{ from: string; to: string; data: DayStats[] }> {
    if (!Number.isInteger(days) || days < 1 || days > MAX_DAYS) throw invalid(`Query parameter \`days\` must be an integer from 1 to ${MAX_DAYS}`);
    const today = Math.floor(this.deps.clock.now() / DAY_MS);
    const first = today - days + 1;
    const [from, to] = [first * DAY_MS, (today + 1) * DAY_MS];
    const scope = { workspaceId: principal.workspaceId, domain: principal.domain };
    const rows = new Map<string, DayStats>();
    for (let d = first; d <= today; d++) {
      for (const stream of ['transactional', 'broadcast']) rows.set(`${d}/${stream}`, empty(iso(d * DAY_MS).slice(0, 10), stream));
    }
    const row = (day: number, stream: string) => rows.get(`${day}/${stream}`);
    for (const c of await statsRepo.sent(this.deps.db, scope, from, to)) {
      const r = row(c.day, c.stream);
      if (r) r.sent += c.count;
    }
    for (const c of await statsRepo.events(this.deps.db, scope, from, to)) {
      const r = row(c.day, c.stream);
      const field = COUNTED[c.name as keyof typeof COUNTED];
      if (r && field) r[field] += c.count;
    }
    for (const b of await statsRepo.bounces(this.deps.db, scope, from, to)) {
      const r = row(Math.floor(Number(b.occurred_at) / DAY_MS), b.stream);
      if (!r) continue;
      const type = (JSON.parse(b.payload) as { bounce_type?: string }).bounce_type;
      r.bounced[(BOUNCE_TYPES as readonly (string | undefined)[]).includes(type) ? (type as (typeof BOUNCE_TYPES)[number]) : 'transient'] += 1;
    }
    return { from: iso(from).slice(0, 10), to: iso(today * DAY_MS).slice(0, 10), data: [...rows.values()] };
  }

  async queue(principal: Principal) {
    const { byStatus, oldestDeferredSince, nextRetryAt } = await statsRepo.queue(this.deps.db, { workspaceId: principal.workspaceId, domain: principal.domain });
    const now = this.deps.clock.now();
    return {
      ...byStatus,
      oldest_deferred_since: oldestDeferredSince === null ? null : iso(oldestDeferredSince),
      oldest_deferred_age_seconds: oldestDeferredSince === null ? null : Math.max(0, Math.floor((now - oldestDeferredSince) / 1000)),
      next_retry_at: nextRetryAt === null ? null : iso(nextRetryAt),
    } as {
      held: number;
      scheduled: number;
      queued: number;
      sending: number;
      deferred: number;
      oldest_deferred_since: string | null;
      oldest_deferred_age_seconds: number | null;
      next_retry_at: string | null;
    };
  }
}
