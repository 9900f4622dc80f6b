import { invalid, notFound } from '../core/errors.ts';
import type { Clock } from '../core/ports.ts';
import { iso } from '../core/time.ts';
import type { Db } from '../store/db.ts';
import { messagesRepo } from '../store/messages.ts';
import { queueControlRepo, type GroupCounts, type QueueFilter } from '../store/queue-control.ts';
import type { Principal } from '../tenancy/principal.ts';

export type QueueAction = 'hold' | 'release' | 'cancel';

/** What a caller of the API names: recipients' domain, their destination group, the stream, one message. */
export interface QueueRequest {
  domain?: string;
  group?: string;
  stream?: string;
  email_id?: number;
}

/** A destination group's limits, as the shaping configuration gives them. */
export type LimitsOf = (group: string) => { connections: number; perMinute: number | null };

/** One destination group as `queue stats` and `GET /stats/queue` show it (SPEC §11). */
export interface GroupView {
  group: string;
  queued: number;
  deferred: number;
  held: number;
  connections: number;
  per_minute: number | null;
  suspended_until?: string;
  reason?: string;
  /** A standing hold names the whole group: mail for it is held until it is released. */
  on_hold: boolean;
  hold_reason?: string;
}

const STREAMS = ['transactional', 'broadcast'];

/** The names the API's filter fields go by, for the message that asks for one. */
const API_FIELDS = ['domain', 'group', 'stream', 'email_id'];

/**
 * Holding, releasing and canceling queued mail (SPEC §11): server-wide for the command line,
 * within a key's workspace (and a domain-scoped key's sending domain) for the API. The moves
 * themselves, and the standing holds, are `store/queue-control.ts`.
 */
export class QueueControl {
  constructor(private readonly deps: { db: Db; clock: Clock; limitsOf: LimitsOf }) {}

  /** The API's hold, release or cancel: always within the key's workspace and, for a domain-scoped key, its sending domain. */
  async forKey(principal: Principal, action: QueueAction, request: QueueRequest): Promise<{ affected: number }> {
    const named = API_FIELDS.filter((k) => request[k as keyof QueueRequest] !== undefined);
    if (named.length === 0) throw invalid(`Name at least one of ${API_FIELDS.join(', ')}: an empty filter would take the whole queue`);
    if (request.email_id !== undefined) {
      const message = await messagesRepo.byId(this.deps.db, request.email_id);
      if (!message || message.workspace_id !== principal.workspaceId || (principal.domain !== null && message.domain !== principal.domain)) throw notFound();
    }
    return this.run(action, {
      ...this.checked({ domain: request.domain, group: request.group, stream: request.stream, messageId: request.email_id }),
      workspaceId: principal.workspaceId,
      ...(principal.domain !== null ? { sendingDomain: principal.domain } : {}),
    });
  }

  /** The command line's hold, release or cancel: any workspace unless one is named. */
  async serverWide(action: QueueAction, filter: QueueFilter, reason?: string): Promise<{ affected: number }> {
    if (filter.messageId !== undefined && !(await messagesRepo.byId(this.deps.db, filter.messageId))) throw notFound();
    return this.run(action, { ...this.checked(filter), ...(filter.workspaceId !== undefined ? { workspaceId: filter.workspaceId } : {}) }, reason);
  }

  /** Waiting mail per destination group with its limits and state; a key sees its own mail. */
  async groups(scope: Principal | null): Promise<GroupView[]> {
    const rows = await queueControlRepo.groupStats(this.deps.db, {
      ...(scope ? { workspaceId: scope.workspaceId } : {}),
      ...(scope?.domain ? { sendingDomain: scope.domain } : {}),
      now: this.deps.clock.now(),
    });
    return rows.map((g) => groupView(g, this.deps.limitsOf(g.group)));
  }

  private async run(action: QueueAction, filter: QueueFilter, reason?: string): Promise<{ affected: number }> {
    const now = this.deps.clock.now();
    const { db } = this.deps;
    const affected =
      action === 'hold'
        ? await queueControlRepo.hold(db, filter, now, reason ?? null)
        : action === 'release'
          ? await queueControlRepo.release(db, filter, now)
          : await queueControlRepo.cancel(db, filter, now);
    return { affected };
  }

  /** The filter's names checked and trimmed; fields not given stay out. */
  private checked(f: Omit<QueueFilter, 'workspaceId'>): QueueFilter {
    const out: QueueFilter = {};
    const text = (field: string, value: string) => {
      const v = value.trim();
      if (v === '') throw invalid(`Field \`${field}\` must not be empty`);
      return v.toLowerCase();
    };
    if (f.domain !== undefined) out.domain = text('domain', f.domain);
    if (f.group !== undefined) out.group = text('group', f.group);
    if (f.sendingDomain !== undefined) out.sendingDomain = text('sending_domain', f.sendingDomain);
    if (f.stream !== undefined) {
      if (!STREAMS.includes(f.stream)) throw invalid('Field `stream` must be `transactional` or `broadcast`');
      out.stream = f.stream;
    }
    if (f.messageId !== undefined) out.messageId = f.messageId;
    return out;
  }
}

export function groupView(g: GroupCounts, limits: { connections: number; perMinute: number | null }): GroupView {
  return {
    group: g.group,
    queued: g.queued,
    deferred: g.deferred,
    held: g.held,
    connections: limits.connections,
    per_minute: limits.perMinute,
    ...(g.suspendedUntil !== null ? { suspended_until: iso(g.suspendedUntil) } : {}),
    ...(g.suspendedUntil !== null && g.reason !== null ? { reason: g.reason } : {}),
    on_hold: g.onHold,
    ...(g.onHold && g.holdReason !== null ? { hold_reason: g.holdReason } : {}),
  };
}
