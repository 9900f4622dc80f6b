import { insertedId, type Conn, type Tx } from './db.ts';

export type EndpointStatus = 'active' | 'paused' | 'disabled';
export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed' | 'skipped';

export interface WebhookEndpointRow {
  id: number;
  workspace_id: number;
  url: string;
  /** JSON array of event names; null: every event. */
  events: string | null;
  secret: string;
  status: EndpointStatus;
  failure_count: number;
  last_success_at: number | null;
  /** While paused: when the next probe may run. */
  next_probe_at?: number | null;
  lease_owner?: string | null;
  lease_until?: number | null;
  /** Set on a route (SPEC §14): its match; null on a webhook endpoint. */
  route_match?: string | null;
  route_priority?: number;
  created_at: number;
  updated_at: number;
}

export interface WebhookDeliveryRow {
  id: number;
  /** Null for a route's delivery of a received message (`inbound_id`, `payload`). */
  event_id: number | null;
  endpoint_id: number;
  workspace_id: number;
  email_id: number;
  event: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  due_at: number | null;
  lease_owner: string | null;
  lease_until: number | null;
  created_at: number;
  updated_at: number;
}

/** A recorded event, as the outbox needs it. */
export interface OutboxEvent {
  /** Null for a received message's delivery to a route, which carries its own payload. */
  id: number | null;
  workspace_id: number;
  email_id: number;
  event: string;
}

/** One POST tried: an entry of the endpoint's delivery log. */
export interface WebhookAttemptRow {
  id: number;
  delivery_id: number;
  endpoint_id: number;
  event: string;
  email_id: number;
  attempt: number;
  response_code: number | null;
  response_body: string | null;
  error: string | null;
  duration_ms: number;
  created_at: number;
  /** Read with the log (attemptsOf): the address of the recipient the event is about, if any. */
  recipient?: string | null;
}

export const subscribed = (endpoint: Pick<WebhookEndpointRow, 'events'>, event: string): boolean =>
  endpoint.events === null || (JSON.parse(endpoint.events) as string[]).includes(event);

/** An outbox row for one endpoint and event: pending and due at once, or born skipped when the endpoint is disabled. */
export function outboxRow(ep: WebhookEndpointRow, e: OutboxEvent, at: number): Omit<WebhookDeliveryRow, 'id'> {
  const pending = ep.status !== 'disabled';
  return {
    event_id: e.id,
    endpoint_id: ep.id,
    workspace_id: e.workspace_id,
    email_id: e.email_id,
    event: e.event,
    status: pending ? 'pending' : 'skipped',
    attempts: 0,
    due_at: pending ? at : null,
    lease_owner: null,
    lease_until: null,
    created_at: at,
    updated_at: at,
  };
}

export const webhooksRepo = {
  async insertEndpoint(db: Conn, row: Omit<WebhookEndpointRow, 'id'>): Promise<number> {
    const [inserted] = await db('webhook_endpoints').insert(row).returning('id');
    return insertedId(inserted);
  },
  endpointsOf: (db: Conn, workspaceId: number): Promise<WebhookEndpointRow[]> =>
    db('webhook_endpoints').where({ workspace_id: workspaceId }).whereNull('route_match').orderBy('id'),

  /**
   * A delivery log entry for each delivery skipped because its endpoint is disabled: no POST
   * was made (`attempt` counts the real ones before), and a replay can send it.
   */
  async logSkipped(tx: Tx, rows: Pick<WebhookDeliveryRow, 'id' | 'endpoint_id' | 'event' | 'email_id' | 'attempts'>[], at: number): Promise<void> {
    const entries = rows.map((d): Omit<WebhookAttemptRow, 'id'> => ({
      delivery_id: d.id,
      endpoint_id: d.endpoint_id,
      event: d.event,
      email_id: d.email_id,
      attempt: d.attempts,
      response_code: null,
      response_body: null,
      error: 'skipped: the endpoint is disabled',
      duration_ms: 0,
      created_at: at,
    }));
    for (let i = 0; i < entries.length; i += 200) await tx('webhook_attempts').insert(entries.slice(i, i + 200));
  },
  /** A webhook endpoint (not a route). */
  endpointById: (db: Conn, id: number): Promise<WebhookEndpointRow | undefined> => db('webhook_endpoints').where({ id }).whereNull('route_match').first(),
  async updateEndpoint(db: Conn, id: number, patch: Partial<Omit<WebhookEndpointRow, 'id' | 'workspace_id' | 'created_at'>>): Promise<void> {
    await db('webhook_endpoints').where({ id }).update(patch);
  },
  async deleteEndpoint(db: Conn, id: number): Promise<void> {
    await db('webhook_endpoints').where({ id }).delete();
  },
  /**
   * The delivery log of an endpoint, newest first, after the keyset cursor `beforeId`, each
   * attempt with the recipient its event is about (three recipients of one message give three
   * `email.delivered` attempts that differ only there).
   */
  attemptsOf(db: Conn, endpointId: number, opts: { beforeId?: number; limit: number }): Promise<WebhookAttemptRow[]> {
    const q = db('webhook_attempts')
      .leftJoin('webhook_deliveries', 'webhook_deliveries.id', 'webhook_attempts.delivery_id')
      .leftJoin('events', 'events.id', 'webhook_deliveries.event_id')
      .leftJoin('recipients', 'recipients.id', 'events.recipient_id')
      .where('webhook_attempts.endpoint_id', endpointId)
      .orderBy('webhook_attempts.id', 'desc')
      .limit(opts.limit)
      .select('webhook_attempts.*', 'recipients.address as recipient');
    if (opts.beforeId !== undefined) q.where('webhook_attempts.id', '<', opts.beforeId);
    return q;
  },
  /**
   * Replay: every recorded event of the endpoint's workspace it subscribes to, occurred at or
   * after `since`, is pending again for it, due now, with a fresh retry series; events it had
   * no delivery for (registered later, subscribed later) get one. Returns how many.
   */
  async replay(tx: Tx, endpoint: WebhookEndpointRow, since: number, now: number): Promise<number> {
    const events: OutboxEvent[] = await tx('events')
      .where({ workspace_id: endpoint.workspace_id })
      .where('occurred_at', '>=', since)
      .orderBy('id')
      .select('id', 'workspace_id', 'email_id', 'event');
    let queued = 0;
    for (const e of events.filter((ev) => subscribed(endpoint, ev.event))) {
      const again = { status: 'pending', attempts: 0, due_at: now, lease_owner: null, lease_until: null, updated_at: now };
      const n = await tx('webhook_deliveries').where({ event_id: e.id, endpoint_id: endpoint.id }).update(again);
      if (n === 0) {
        await tx('webhook_deliveries').insert({
          ...again,
          event_id: e.id,
          endpoint_id: endpoint.id,
          workspace_id: e.workspace_id,
          email_id: e.email_id,
          event: e.event,
          created_at: now,
        });
      }
      queued += 1;
    }
    return queued;
  },
  deliveriesOf: (db: Conn, eventId: number): Promise<WebhookDeliveryRow[]> => db('webhook_deliveries').where({ event_id: eventId }).orderBy('endpoint_id'),
  async setDeliveryStatus(db: Conn, id: number, status: WebhookDeliveryStatus, at: number): Promise<void> {
    await db('webhook_deliveries')
      .where({ id })
      .update({ status, updated_at: at, due_at: status === 'pending' ? at : null });
  },
};
