import { insertedId, isPg, type Conn, type Tx } from './db.ts';
import { webhooksRepo } from './webhooks.ts';

export interface EventRow {
  id: number;
  workspace_id: number;
  email_id: number;
  recipient_id: number | null;
  event: string;
  occurred_at: number;
  /** The webhook payload exactly as it will be sent (JSON). */
  payload: string;
}

export const eventsRepo = {
  /**
   * Inserts an event at the first free millisecond at or after `at` for its (email, event):
   * `occurred_at` is unique per pair. The message row is locked first (PostgreSQL), so the
   * read of the latest time and the insert are not interleaved with another transaction doing
   * the same for this message: the second waits, then reads the first one's committed row.
   * `payload` is built from the time allocated. The event's webhook deliveries are queued in
   * the same transaction (the outbox). Returns the row's id and time.
   */
  async insert(
    tx: Tx,
    e: Omit<EventRow, 'id' | 'occurred_at' | 'payload'>,
    at: number,
    payload: (occurredAt: number) => string,
  ): Promise<{ id: number; occurredAt: number }> {
    if (isPg(tx)) await tx('messages').where({ id: e.email_id }).forUpdate().select('id');
    const latest = await tx('events').where({ email_id: e.email_id, event: e.event }).max({ at: 'occurred_at' }).first();
    const last = latest?.at === null || latest?.at === undefined ? null : Number(latest.at);
    const occurredAt = last !== null && last >= at ? last + 1 : at;
    const [inserted] = await tx('events').insert({ ...e, occurred_at: occurredAt, payload: payload(occurredAt) }).returning('id');
    const id = insertedId(inserted);
    await webhooksRepo.queueDeliveries(tx, { id, workspace_id: e.workspace_id, email_id: e.email_id, event: e.event }, at);
    return { id, occurredAt };
  },
  /** A message's event payloads in the order they happened. */
  async payloadsOf(db: Conn, emailId: number): Promise<string[]> {
    const rows: { payload: string }[] = await db('events').where({ email_id: emailId }).orderBy([{ column: 'occurred_at' }, { column: 'id' }]).select('payload');
    return rows.map((r) => r.payload);
  },
  /**
   * Deletes up to `limit` events that occurred before `before` and have no webhook delivery
   * still pending (their finished deliveries go with them); returns how many.
   */
  prune: (db: Conn, before: number, limit: number): Promise<number> =>
    db('events')
      .whereIn(
        'id',
        db('events')
          .select('id')
          .where('occurred_at', '<', before)
          .whereNotExists((pending) => pending.select(db.raw('1')).from('webhook_deliveries as d').whereRaw('d.event_id = events.id').where('d.status', 'pending'))
          .limit(limit),
      )
      .delete(),
};
