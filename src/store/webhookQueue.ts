import type { Knex } from 'knex';
import { isPg, type Conn, type Db, type Tx } from './db.ts';
import {
  outboxRow,
  subscribed,
  webhooksRepo,
  type EndpointStatus,
  type OutboxEvent,
  type WebhookAttemptRow,
  type WebhookDeliveryRow,
  type WebhookEndpointRow,
} from './webhooks.ts';

/**
 * The webhook dispatcher's queue. The unit a dispatcher claims is an endpoint, under a lease
 * (`lease_owner`, `lease_until` on `webhook_endpoints`): while it holds one it alone sends to
 * that endpoint, in delivery id order, so several processes on one PostgreSQL database never
 * interleave one receiver's events, and one slow receiver occupies one lane only. A dispatcher
 * that dies leaves its lease to run out; the deliveries it had not finished are still pending.
 */

/** A pending delivery with the exact bytes to send. */
export interface DueDelivery {
  id: number;
  /** Null for a route's delivery; its `webhook-id` is then named after the delivery. */
  event_id: number | null;
  endpoint_id: number;
  email_id: number;
  event: string;
  attempts: number;
  created_at: number;
  payload: string;
}

export interface EndpointPolicy {
  pauseAfter: number;
  probeMs: number;
  disableAfterMs: number;
}

// A route's delivery carries its own payload; an event's delivery sends the event's.
const pendingOf = (db: Conn, endpointId: number) =>
  db('webhook_deliveries as d')
    .leftJoin('events as ev', 'ev.id', 'd.event_id')
    .where({ 'd.endpoint_id': endpointId, 'd.status': 'pending' })
    .orderBy('d.id')
    .select('d.id', 'd.event_id', 'd.endpoint_id', 'd.email_id', 'd.event', 'd.attempts', 'd.created_at', db.raw('coalesce(d.payload, ev.payload) as payload'));

export const webhookQueue = {
  /**
   * The outbox write, in the transaction that records the events: one delivery per endpoint of
   * the event's workspace subscribed to it, due at once, in two statements whatever their
   * number: the endpoints of their workspaces, then every delivery in one insert. A disabled
   * endpoint's delivery is born skipped and logged (a replay can send it). Returns how many
   * deliveries were created.
   */
  async queueMany(tx: Tx, events: { event: OutboxEvent; at: number }[]): Promise<number> {
    if (events.length === 0) return 0;
    const workspaces = [...new Set(events.map((e) => e.event.workspace_id))];
    const endpoints: WebhookEndpointRow[] = await tx('webhook_endpoints').whereIn('workspace_id', workspaces).whereNull('route_match').orderBy('id');
    if (endpoints.length === 0) return 0;
    const rows: Omit<WebhookDeliveryRow, 'id'>[] = [];
    for (const { event: e, at } of events) {
      for (const ep of endpoints) {
        if (ep.workspace_id !== e.workspace_id || !subscribed(ep, e.event)) continue;
        rows.push(outboxRow(ep, e, at));
      }
    }
    for (let i = 0; i < rows.length; i += 1000) {
      const chunk = rows.slice(i, i + 1000);
      if (!chunk.some((r) => r.status === 'skipped')) {
        await tx('webhook_deliveries').insert(chunk);
        continue;
      }
      const inserted: WebhookDeliveryRow[] = await tx('webhook_deliveries').insert(chunk).returning('*');
      const skipped = inserted.filter((r) => r.status === 'skipped');
      for (const at of new Set(skipped.map((r) => Number(r.created_at)))) {
        await webhooksRepo.logSkipped(
          tx,
          skipped.filter((r) => Number(r.created_at) === at),
          at,
        );
      }
    }
    return rows.length;
  },

  /**
   * Leases up to `limit` endpoints nobody holds that have work: an active one with a pending
   * delivery due, a paused one whose probe is due. One statement picks and leases (SKIP LOCKED
   * on PostgreSQL; SQLite's single writer makes it atomic).
   */
  async claimEndpoints(db: Db, req: { owner: string; now: number; leaseMs: number; limit: number }): Promise<WebhookEndpointRow[]> {
    if (req.limit <= 0) return [];
    return db.transaction(async (tx) => {
      const free = (q: Knex.QueryBuilder) => q.whereNull('lease_until').orWhere('lease_until', '<', req.now);
      const pick = tx('webhook_endpoints as e')
        .select('e.id')
        .where((q) => free(q))
        .where((q) => q.where('e.status', 'active').orWhere((p) => p.where('e.status', 'paused').where('e.next_probe_at', '<=', req.now)))
        .whereExists((q) =>
          q
            .select(tx.raw('1'))
            .from('webhook_deliveries as d')
            .whereRaw('d.endpoint_id = e.id')
            .where('d.status', 'pending')
            .where((due) => due.where('e.status', 'paused').orWhere('d.due_at', '<=', req.now)),
        )
        .orderBy('e.id')
        .limit(req.limit);
      if (isPg(tx)) pick.forUpdate().skipLocked();
      return tx('webhook_endpoints')
        .whereIn('id', pick)
        .where((q) => free(q))
        .update({ lease_owner: req.owner, lease_until: req.now + req.leaseMs })
        .returning('*');
    });
  },

  /**
   * Extends this owner's endpoint leases, one statement per endpoint: a statement that locked
   * several in turn could deadlock with this owner's own outcome commits, which lock the same
   * endpoints in another order. Not skipped when locked either: a busy lane's endpoint is locked
   * by one commit after another, and skipping it would let its lease run out while it sends.
   */
  async renewEndpoints(db: Conn, owner: string, ids: number[], now: number, leaseMs: number): Promise<number> {
    let renewed = 0;
    for (const id of ids)
      renewed += await db('webhook_endpoints')
        .where({ id, lease_owner: owner })
        .update({ lease_until: now + leaseMs });
    return renewed;
  },

  async releaseEndpoint(db: Conn, owner: string, id: number): Promise<void> {
    await db('webhook_endpoints').where({ id, lease_owner: owner }).update({ lease_owner: null, lease_until: null });
  },

  /** The endpoint as it is now, if `owner` still holds its lease. */
  leased: (db: Conn, owner: string, id: number): Promise<WebhookEndpointRow | undefined> => db('webhook_endpoints').where({ id, lease_owner: owner }).first(),

  /** Pending deliveries of an endpoint due by `now`, oldest first. */
  due: (db: Conn, endpointId: number, now: number, limit: number): Promise<DueDelivery[]> => pendingOf(db, endpointId).where('d.due_at', '<=', now).limit(limit),

  /** A paused endpoint's probe: its oldest pending delivery, due or not. */
  probe: (db: Conn, endpointId: number): Promise<DueDelivery[]> => pendingOf(db, endpointId).limit(1),

  /**
   * The guard an outcome write starts with: true while `owner` holds the endpoint's lease. As
   * the first statement it is a write, so the transaction holds the row until it commits.
   */
  async holds(tx: Tx, owner: string, endpointId: number, now: number): Promise<boolean> {
    return (await tx('webhook_endpoints').where({ id: endpointId, lease_owner: owner }).update({ updated_at: now })) > 0;
  },

  async logAttempt(tx: Tx, row: Omit<WebhookAttemptRow, 'id'>): Promise<void> {
    await tx('webhook_attempts').insert(row);
  },

  /**
   * 2xx answers: the deliveries are done and logged; the endpoint's count resets and a paused
   * one is active again.
   */
  async succeeded(tx: Tx, endpointId: number, attempts: Omit<WebhookAttemptRow, 'id'>[], now: number): Promise<void> {
    for (let i = 0; i < attempts.length; i += 200) {
      const chunk = attempts.slice(i, i + 200);
      await tx('webhook_attempts').insert(chunk);
      await tx('webhook_deliveries')
        .whereIn(
          'id',
          chunk.map((a) => a.delivery_id),
        )
        .update({ status: 'delivered', attempts: tx.raw('attempts + 1'), due_at: null, updated_at: now });
    }
    await tx('webhook_endpoints').where({ id: endpointId }).update({ failure_count: 0, last_success_at: now, next_probe_at: null });
    await tx('webhook_endpoints').where({ id: endpointId, status: 'paused' }).update({ status: 'active' });
  },

  /**
   * A failed attempt: the delivery is due again at `retryAt`, or given up when that is null.
   * The endpoint's consecutive failures rise; at `pauseAfter` an active endpoint pauses; a
   * paused one whose last success (or creation) is older than `disableAfterMs` is disabled,
   * and its pending deliveries are skipped. Returns the endpoint's status after.
   */
  async failed(tx: Tx, delivery: DueDelivery, now: number, retryAt: number | null, policy: EndpointPolicy): Promise<EndpointStatus> {
    await tx('webhook_deliveries')
      .where({ id: delivery.id })
      .update({ status: retryAt === null ? 'failed' : 'pending', attempts: delivery.attempts + 1, due_at: retryAt, updated_at: now });
    await tx('webhook_endpoints').where({ id: delivery.endpoint_id }).increment('failure_count', 1);
    const ep: WebhookEndpointRow | undefined = await tx('webhook_endpoints').where({ id: delivery.endpoint_id }).first();
    if (!ep) return 'disabled';
    const lastGood = ep.last_success_at ?? ep.created_at;
    if (ep.status === 'paused' && now - lastGood > policy.disableAfterMs) {
      await tx('webhook_endpoints').where({ id: ep.id }).update({ status: 'disabled', next_probe_at: null });
      const skipped: WebhookDeliveryRow[] = await tx('webhook_deliveries').where({ endpoint_id: ep.id, status: 'pending' }).orderBy('id');
      await tx('webhook_deliveries').where({ endpoint_id: ep.id, status: 'pending' }).update({ status: 'skipped', due_at: null, updated_at: now });
      await webhooksRepo.logSkipped(tx, skipped, now);
      return 'disabled';
    }
    if (ep.status === 'paused' || (ep.status === 'active' && ep.failure_count >= policy.pauseAfter)) {
      await tx('webhook_endpoints')
        .where({ id: ep.id })
        .update({ status: 'paused', next_probe_at: now + policy.probeMs });
      return 'paused';
    }
    return ep.status;
  },

  /** Pending deliveries by the status of their endpoint, for the backlog gauge. */
  async backlog(db: Conn): Promise<Record<EndpointStatus, number>> {
    const out: Record<EndpointStatus, number> = { active: 0, paused: 0, disabled: 0 };
    const rows: { status: EndpointStatus; count: number | string }[] = await db('webhook_deliveries as d')
      .join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .where('d.status', 'pending')
      .groupBy('e.status')
      .select('e.status')
      .count({ count: '*' });
    for (const r of rows) out[r.status] = Number(r.count);
    return out;
  },
};
