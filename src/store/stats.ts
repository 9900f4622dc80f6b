import type { Conn } from './db.ts';
import { UNFINISHED_STATUSES } from '../messages/status.ts';

// A literal in the SQL, not a parameter: SQLite divides integers only by an integer.
const DAY_MS = 86400000;

export interface StatsScope {
  workspaceId: number;
  /** A domain-scoped key counts only its domain's mail. */
  domain: string | null;
}

/** Counts per UTC day (days since 1970-01-01) and stream. */
export interface DayCount {
  day: number;
  stream: string;
  name: string;
  count: number;
}

const UNFINISHED: readonly string[] = UNFINISHED_STATUSES;

/**
 * Aggregates for the console's overview, grouped in the database: integer division of the
 * millisecond timestamps gives the UTC day on SQLite and PostgreSQL alike.
 */
export const statsRepo = {
  /** Recipients accepted per day and stream (suppressed ones were never sent). */
  async sent(db: Conn, scope: StatsScope, from: number, to: number): Promise<DayCount[]> {
    const q = db('messages')
      .join('recipients', 'recipients.message_id', 'messages.id')
      .where('messages.workspace_id', scope.workspaceId)
      .andWhere('messages.created_at', '>=', from)
      .andWhere('messages.created_at', '<', to)
      .andWhereNot('recipients.status', 'suppressed')
      .groupByRaw('1, 2')
      .select(db.raw(`messages.created_at / ${DAY_MS} as day`), 'messages.stream as stream')
      .count({ count: '*' });
    if (scope.domain !== null) q.andWhere('messages.domain', scope.domain);
    const rows = (await q) as unknown as { day: number | string; stream: string; count: number | string }[];
    return rows.map((r) => ({ day: Number(r.day), stream: r.stream, name: 'sent', count: Number(r.count) }));
  },

  /** Events per day, stream and name; bounces apart, since their kind is in the payload. */
  async events(db: Conn, scope: StatsScope, from: number, to: number): Promise<DayCount[]> {
    const q = db('events')
      .join('messages', 'messages.id', 'events.email_id')
      .where('events.workspace_id', scope.workspaceId)
      .andWhere('events.occurred_at', '>=', from)
      .andWhere('events.occurred_at', '<', to)
      .andWhereNot('events.event', 'email.bounced')
      .groupByRaw('1, 2, 3')
      .select(db.raw(`events.occurred_at / ${DAY_MS} as day`), 'messages.stream as stream', 'events.event as name')
      .count({ count: '*' });
    if (scope.domain !== null) q.andWhere('messages.domain', scope.domain);
    const rows = (await q) as unknown as { day: number | string; stream: string; name: string; count: number | string }[];
    return rows.map((r) => ({ day: Number(r.day), stream: r.stream, name: r.name, count: Number(r.count) }));
  },

  /** Bounce events with their payloads (the bounce type is read from there). */
  bounces(db: Conn, scope: StatsScope, from: number, to: number): Promise<{ occurred_at: number | string; stream: string; payload: string }[]> {
    const q = db('events')
      .join('messages', 'messages.id', 'events.email_id')
      .where('events.workspace_id', scope.workspaceId)
      .andWhere('events.event', 'email.bounced')
      .andWhere('events.occurred_at', '>=', from)
      .andWhere('events.occurred_at', '<', to)
      .select('events.occurred_at', 'messages.stream as stream', 'events.payload');
    if (scope.domain !== null) q.andWhere('messages.domain', scope.domain);
    return q;
  },

  /** Unfinished recipients by status, when the oldest deferred one first became due, and the next retry of any. */
  async queue(db: Conn, scope: StatsScope): Promise<{ byStatus: Record<string, number>; oldestDeferredSince: number | null; nextRetryAt: number | null }> {
    const scoped = <T extends ReturnType<Conn>>(q: T): T => {
      q.join('messages', 'messages.id', 'recipients.message_id').where('recipients.workspace_id', scope.workspaceId);
      if (scope.domain !== null) q.andWhere('messages.domain', scope.domain);
      return q;
    };
    const counts = (await scoped(db('recipients'))
      .whereIn('recipients.status', UNFINISHED)
      .groupBy('recipients.status')
      .select('recipients.status as status')
      .count({ count: '*' })) as unknown as { status: string; count: number | string }[];
    const byStatus: Record<string, number> = Object.fromEntries(UNFINISHED.map((s) => [s, 0]));
    for (const c of counts) byStatus[c.status] = Number(c.count);
    const oldest = (await scoped(db('recipients'))
      .where('recipients.status', 'deferred')
      .min({ since: db.raw('coalesce(recipients.first_due_at, recipients.created_at)'), next: 'recipients.due_at' })
      .first()) as { since: number | string | null; next: number | string | null } | undefined;
    return {
      byStatus,
      oldestDeferredSince: oldest?.since == null ? null : Number(oldest.since),
      nextRetryAt: oldest?.next == null ? null : Number(oldest.next),
    };
  },
};
