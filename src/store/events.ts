import { isPg, readAfter, runTogether, type Conn, type Statement, type Tx } from './db.ts';
import { webhookQueue } from './webhookQueue.ts';

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
   * Inserts events, each at the first free millisecond at or after its `at` for its (email,
   * event): `occurred_at` is unique per pair. The messages' rows are locked first (PostgreSQL),
   * so the read of the latest times and the insert are not interleaved with another transaction
   * doing the same for these messages: the second waits, then reads the first one's committed
   * rows. Each `payload` is built from the time allocated. The events' webhook deliveries are
   * queued in the same transaction (the outbox). Returns each event's id and time, in input
   * order.
   *
   * A fixed number of statements serve the whole list:
   * the latest time of every pair read in one query, the events in one multi-row insert, their
   * webhook deliveries in another. `messagesLocked`: the caller already holds the messages' row
   * locks (taken in id order), which keeps the read and the insert from interleaving with
   * another transaction's for the same message. `alongside`: writes of the caller's that go in
   * the same round trip as the first read (which must not depend on them).
   */
  async insertMany(
    tx: Tx,
    items: { row: Omit<EventRow, 'id' | 'occurred_at' | 'payload'>; at: number; payload: (occurredAt: number) => string }[],
    options: { messagesLocked?: boolean; alongside?: Statement[] } = {},
  ): Promise<{ id: number; occurredAt: number }[]> {
    if (items.length === 0) {
      await runTogether(tx, options.alongside ?? []);
      return [];
    }
    const emailIds = [...new Set(items.map((i) => i.row.email_id))].sort((a, b) => a - b);
    // SQLite has one writer at a time: nothing interleaves with this transaction.
    if (isPg(tx) && !options.messagesLocked) await tx('messages').whereIn('id', emailIds).orderBy('id').forUpdate().select('id');
    const names = [...new Set(items.map((i) => i.row.event))];
    const latest = await readAfter<{ email_id: number; event: string; at: string | number }>(
      tx,
      options.alongside ?? [],
      tx('events').whereIn('email_id', emailIds).whereIn('event', names).groupBy('email_id', 'event').select('email_id', 'event').max({ at: 'occurred_at' }),
    );
    const last = new Map(latest.map((l) => [`${l.email_id} ${l.event}`, Number(l.at)]));
    const rows = items.map((item) => {
      const key = `${item.row.email_id} ${item.row.event}`;
      const before = last.get(key);
      const occurredAt = before !== undefined && before >= item.at ? before + 1 : item.at;
      last.set(key, occurredAt);
      return { ...item.row, occurred_at: occurredAt, payload: item.payload(occurredAt) };
    });
    const ids = new Map<string, number>();
    for (let i = 0; i < rows.length; i += 1000) {
      const inserted: { id: number; email_id: number; event: string; occurred_at: string | number }[] = await tx('events')
        .insert(rows.slice(i, i + 1000))
        .returning(['id', 'email_id', 'event', 'occurred_at']);
      for (const r of inserted) ids.set(`${r.email_id} ${r.event} ${Number(r.occurred_at)}`, r.id);
    }
    const out = rows.map((r) => ({ id: ids.get(`${r.email_id} ${r.event} ${r.occurred_at}`)!, occurredAt: r.occurred_at }));
    await webhookQueue.queueMany(
      tx,
      rows.map((r, i) => ({ event: { id: out[i]!.id, workspace_id: r.workspace_id, email_id: r.email_id, event: r.event }, at: items[i]!.at })),
    );
    return out;
  },
  /** A message's event payloads in the order they happened. */
  async payloadsOf(db: Conn, emailId: number): Promise<string[]> {
    const rows: { payload: string }[] = await db('events')
      .where({ email_id: emailId })
      .orderBy([{ column: 'occurred_at' }, { column: 'id' }])
      .select('payload');
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
