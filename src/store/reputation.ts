import type { Conn, Db } from './db.ts';
import { queueControlRepo } from './queue-control.ts';

/** Delivered and complained recipients of one workspace, sending domain and stream in a window. */
export interface ReputationCount {
  workspaceId: number;
  workspaceName: string;
  domain: string;
  stream: string;
  delivered: number;
  complained: number;
}

/** A domain warning as stored: the latest message of its code, and when it was raised. */
export interface DomainWarningRow {
  code: string;
  message: string;
  at: number;
}

type Counted = { workspace_id: number | string; workspace_name: string; domain: string; stream: string; delivered: number | string; complained: number | string };

/** The standing hold the complaint rate makes: a workspace's broadcast stream from one sending domain, nothing else named. */
const PAUSE_HOLD = `select 1 from queue_holds qh where qh.workspace_id = broadcast_pauses.workspace_id and qh.sending_domain = broadcast_pauses.sending_domain
  and qh.stream = 'broadcast' and qh.domain is null and qh.group_name is null and qh.message_id is null`;

export const reputationRepo = {
  /**
   * Delivered and complained events with `from <= occurred_at < to`, per workspace, sending
   * domain and stream, in one grouped query over `events_reputation_index` (migration 023).
   * `scope` narrows to a workspace and, for a domain-scoped key, its domain.
   */
  async counts(db: Conn, from: number, to: number, scope: { workspaceId?: number; domain?: string | null } = {}): Promise<ReputationCount[]> {
    const q = db('events')
      .join('messages', 'messages.id', 'events.email_id')
      .join('workspaces', 'workspaces.id', 'messages.workspace_id')
      .whereIn('events.event', ['email.delivered', 'email.complained'])
      .andWhere('events.occurred_at', '>=', from)
      .andWhere('events.occurred_at', '<', to)
      .groupBy('messages.workspace_id', 'workspaces.name', 'messages.domain', 'messages.stream')
      .orderBy([{ column: 'messages.workspace_id' }, { column: 'messages.domain' }, { column: 'messages.stream' }])
      .select(
        'messages.workspace_id as workspace_id',
        'workspaces.name as workspace_name',
        'messages.domain as domain',
        'messages.stream as stream',
        db.raw(`sum(case when events.event = 'email.delivered' then 1 else 0 end) as delivered`),
        db.raw(`sum(case when events.event = 'email.complained' then 1 else 0 end) as complained`),
      );
    if (scope.workspaceId !== undefined) q.andWhere('events.workspace_id', scope.workspaceId);
    if (scope.domain) q.andWhere('messages.domain', scope.domain);
    const rows = (await q) as Counted[];
    return rows.map((r) => ({
      workspaceId: Number(r.workspace_id),
      workspaceName: r.workspace_name,
      domain: r.domain,
      stream: r.stream,
      delivered: Number(r.delivered),
      complained: Number(r.complained),
    }));
  },

  /** The sending domains of a workspace whose broadcast stream a standing hold names (any hold naming workspace, sending domain and stream alone). */
  async heldBroadcastDomains(db: Conn, workspaceId: number): Promise<Set<string>> {
    const rows: { sending_domain: string }[] = await db('queue_holds')
      .where({ workspace_id: workspaceId, stream: 'broadcast' })
      .whereNotNull('sending_domain')
      .whereNull('domain')
      .whereNull('group_name')
      .whereNull('message_id')
      .select('sending_domain');
    return new Set(rows.map((r) => r.sending_domain));
  },

  /**
   * Notes, at `now`, each pause whose hold is gone: an operator released it (`queue release`
   * lifts the standing hold). From then on `pause` waits `rearmMs` before holding it again.
   */
  async noteReleases(db: Conn, now: number): Promise<number> {
    return db('broadcast_pauses').whereNull('released_at').whereRaw(`not exists (${PAUSE_HOLD})`).update({ released_at: now });
  },

  /**
   * Holds a workspace's broadcast stream from one sending domain (a standing hold through queue
   * control) unless it is held already or was released less than `rearmMs` ago. One
   * conditional upsert decides, so of several processes checking at once exactly one holds:
   * the row is inserted, or re-armed only when its release is old enough; the loser's
   * statement changes nothing (PostgreSQL waits for the winner's row and re-checks the
   * condition; SQLite has one writer). Returns whether this call held it.
   */
  async pause(db: Db, p: { workspaceId: number; domain: string; now: number; rearmMs: number; reason: string }): Promise<boolean> {
    return db.transaction(async (tx) => {
      const result: unknown = await tx.raw(
        `insert into broadcast_pauses (workspace_id, sending_domain, paused_at, released_at, reason) values (?, ?, ?, null, ?)
         on conflict (workspace_id, sending_domain) do update set paused_at = excluded.paused_at, released_at = null, reason = excluded.reason
         where broadcast_pauses.released_at is not null and broadcast_pauses.released_at <= ?
         returning paused_at`,
        [p.workspaceId, p.domain, p.now, p.reason, p.now - p.rearmMs],
      );
      const rows = Array.isArray(result) ? result : (result as { rows: unknown[] }).rows;
      if (rows.length === 0) return false;
      await queueControlRepo.hold(tx, { workspaceId: p.workspaceId, sendingDomain: p.domain, stream: 'broadcast' }, p.now, p.reason);
      return true;
    });
  },

  /** Raises (or renews) a warning on a sending domain, by name within its workspace. */
  async warn(db: Conn, w: { workspaceId: number; domain: string; code: string; message: string; at: number }): Promise<void> {
    const domain: { id: number } | undefined = await db('domains').where({ workspace_id: w.workspaceId, name: w.domain }).first('id');
    if (!domain) return;
    const row = { domain_id: domain.id, code: w.code, message: w.message, at: w.at };
    await db('domain_warnings').insert(row).onConflict(['domain_id', 'code']).merge({ message: w.message, at: w.at });
  },

  /** A domain's warnings raised since `since`, newest first. */
  async warningsOf(db: Conn, domainId: number, since: number): Promise<DomainWarningRow[]> {
    const rows: { code: string; message: string; at: number | string }[] = await db('domain_warnings')
      .where({ domain_id: domainId })
      .andWhere('at', '>=', since)
      .orderBy('at', 'desc')
      .select('code', 'message', 'at');
    return rows.map((r) => ({ code: r.code, message: r.message, at: Number(r.at) }));
  },
};
