import { insertedId, type Conn, type Tx } from './db.ts';
import { outboxRow, webhooksRepo, type WebhookDeliveryRow, type WebhookEndpointRow } from './webhooks.ts';

/** A message received for a workspace's routes (SPEC §14), with its raw bytes. */
export interface InboundMessageRow {
  id: number;
  workspace_id: number;
  received_at: number;
  mail_from: string;
  /** JSON array of the envelope recipients its routes took. */
  recipients: string;
  remote_ip: string;
  helo: string | null;
  size: number;
  sha256: string;
  /** JSON: the parsed message as the API shows it. */
  parsed: string;
  raw: Buffer;
}

export type InboundMessageSummary = Omit<InboundMessageRow, 'raw'>;

/** One route's delivery of a received message: its payload, exactly as it will be sent. */
export interface RouteDelivery {
  routeId: number;
  payload: string;
}

const SUMMARY = ['id', 'workspace_id', 'received_at', 'mail_from', 'recipients', 'remote_ip', 'helo', 'size', 'sha256', 'parsed'];

export const inboundMessagesRepo = {
  async insert(tx: Tx, row: Omit<InboundMessageRow, 'id'>): Promise<number> {
    const [inserted] = await tx('inbound_messages').insert(row).returning('id');
    return insertedId(inserted);
  },

  async setParsed(tx: Tx, id: number, parsed: string): Promise<void> {
    await tx('inbound_messages').where({ id }).update({ parsed });
  },

  /**
   * The webhook outbox rows of a received message, one per route, due at once; a disabled
   * route's is born skipped and logged, as an event's (a replay sends it). A route removed since
   * RCPT gets none. Returns how many were queued.
   */
  async queueDeliveries(tx: Tx, inbound: { id: number; workspace_id: number }, deliveries: RouteDelivery[], at: number): Promise<number> {
    if (deliveries.length === 0) return 0;
    const routes: WebhookEndpointRow[] = await tx('webhook_endpoints')
      .whereIn(
        'id',
        deliveries.map((d) => d.routeId),
      )
      .whereNotNull('route_match');
    const byId = new Map(routes.map((r) => [r.id, r]));
    const received = { id: null, workspace_id: inbound.workspace_id, email_id: inbound.id, event: 'email.received' };
    const rows = deliveries
      .filter((d) => byId.has(d.routeId))
      .map((d) => ({ ...outboxRow(byId.get(d.routeId)!, received, at), inbound_id: inbound.id, payload: d.payload }));
    if (rows.length === 0) return 0;
    const inserted: WebhookDeliveryRow[] = await tx('webhook_deliveries').insert(rows).returning('*');
    const skipped = inserted.filter((r) => r.status === 'skipped');
    if (skipped.length > 0) await webhooksRepo.logSkipped(tx, skipped, at);
    return rows.length;
  },

  /** A workspace's received messages, newest first, before the keyset cursor `beforeId`. */
  list(db: Conn, workspaceId: number, opts: { beforeId?: number; limit: number }): Promise<InboundMessageSummary[]> {
    const q = db('inbound_messages').where({ workspace_id: workspaceId }).orderBy('id', 'desc').limit(opts.limit).select(SUMMARY);
    if (opts.beforeId !== undefined) q.where('id', '<', opts.beforeId);
    return q;
  },
  summary: (db: Conn, id: number): Promise<InboundMessageSummary | undefined> => db('inbound_messages').where({ id }).first(SUMMARY),
  async rawBytes(db: Conn, id: number): Promise<Buffer | undefined> {
    const row: { raw: Buffer | Uint8Array } | undefined = await db('inbound_messages').where({ id }).first('raw');
    return row && Buffer.from(row.raw);
  },
  /**
   * Retention: received messages older than `before` go, their deliveries and log with them;
   * one still waiting for its receiver stays until it is delivered or given up, as an event does.
   */
  prune: (db: Conn, before: number): Promise<number> =>
    db('inbound_messages')
      .where('received_at', '<', before)
      .whereNotExists((q) => q.select(db.raw('1')).from('webhook_deliveries as d').whereRaw('d.inbound_id = inbound_messages.id').where('d.status', 'pending'))
      .delete(),
};
