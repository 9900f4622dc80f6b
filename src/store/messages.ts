import type { Knex } from 'knex';
import { insertRows, inTransaction, isPg, runAtomically, runTogether, type Conn, type Statement, type Tx } from './db.ts';
import { deriveMessageStatuses } from './messageStatus.ts';
import { suppressionsRepo, type Stream } from './suppressions.ts';
import { messageStatusOf, type MessageStatus, type RecipientStatus } from '../messages/status.ts';

export interface MessageRow {
  id: number;
  workspace_id: number;
  api_key_id: number | null;
  domain: string;
  stream: 'transactional' | 'broadcast';
  status: MessageStatus;
  source: 'api' | 'smtp';
  from_header: string;
  from_address: string;
  subject: string;
  /** JSON of MessageEnvelope (src/messages/content.ts). */
  envelope: string;
  message_id_header: string;
  created_at: number;
  scheduled_at: number | null;
}

/**
 * A message with its body (`message_contents`, a table of its own so that status changes do not
 * rewrite it): JSON of MessageContent (src/messages/content.ts); null once pruned.
 */
export interface MessageWithContent extends MessageRow {
  content: string | null;
}

export interface RecipientRow {
  id: number;
  message_id: number;
  workspace_id: number;
  address: string;
  domain: string;
  kind: 'to' | 'cc' | 'bcc';
  status: RecipientStatus;
  attempts: number;
  last_response: string | null;
  last_mx: string | null;
  /** The sending address of its last attempt (SPEC §12). */
  source_address?: string | null;
  /** How its last delivery's connection was protected (SPEC §13); migration 022. */
  tls?: 'none' | 'opportunistic' | 'mta-sts' | null;
  due_at: number | null;
  first_due_at: number | null;
  lease_owner: string | null;
  lease_until: number | null;
  /** When queue control held it (status `held`); migration 015. */
  held_at?: number | null;
  created_at: number;
  updated_at: number;
}

export interface MessageFilter {
  workspaceId: number;
  domain?: string | null;
  status?: string;
  stream?: string;
  recipient?: string;
  recipientStatus?: string;
  beforeId?: number;
  limit: number;
}

/** Message statuses after which nothing will read the body again. */
const FINAL: MessageStatus[] = ['delivered', 'partial', 'bounced', 'failed', 'suppressed', 'canceled'];

/** A message ready to insert: its row, its recipients, and how to name its Message-ID once its id is known. */
export interface PlannedMessage {
  row: Omit<MessageWithContent, 'id' | 'status'>;
  recipients: Omit<RecipientRow, 'id' | 'message_id'>[];
  messageIdFor?: (id: number) => string;
  /** Recipients not suppressed. */
  sending: number;
}

/** A new message's status, by the rule its later derivations follow (`messages/status.ts`). */
const initialStatus = (recipients: { status: RecipientStatus }[]): MessageStatus => messageStatusOf(recipients.map((r) => r.status));

const ROWS_PER_INSERT = 200;

/** The `message_contents` rows of new messages, given their ids in the same order. */
const contentRows = (messages: PlannedMessage[], ids: number[]) =>
  messages.flatMap(({ row: { content } }, i) => (content === null ? [] : [{ message_id: ids[i]!, content }]));

/** The rows of new messages whose ids are known: each written once, with its Message-ID. */
function rowsOf(messages: PlannedMessage[], ids: number[]) {
  const rowsToInsert = messages.map(({ row: { content: _, ...row }, recipients, messageIdFor }, i) => ({
    ...row,
    id: ids[i]!,
    status: initialStatus(recipients),
    ...(messageIdFor ? { message_id_header: messageIdFor(ids[i]!) } : {}),
  }));
  const recipients = messages.flatMap((m, i) => m.recipients.map((r) => ({ ...r, message_id: ids[i]! })));
  return { rowsToInsert, contents: contentRows(messages, ids), recipients };
}

/** The message with its body, as one row. */
const withContent = (db: Conn) =>
  db('messages').leftJoin('message_contents', 'message_contents.message_id', 'messages.id').select('messages.*', 'message_contents.content');

/**
 * PostgreSQL: the ids are drawn from the sequence first, so each row is inserted once with its
 * Message-ID. Setting it afterwards rewrote every new row and its index entries (the header is
 * indexed, so the update is not a heap-only one): more WAL and CPU per message.
 */
const DRAW_IDS = "select nextval(pg_get_serial_sequence('messages', 'id'))::integer from generate_series(1, ?)";

async function insertManyPg(tx: Conn, messages: PlannedMessage[], alongside: Statement[], drawn?: number[]): Promise<number[]> {
  const ids = drawn ?? (await messagesRepo.drawIds(tx, messages.length)).ids;
  if (ids.length !== messages.length) throw new Error(`${ids.length} ids drawn for ${messages.length} messages`);
  const { rowsToInsert, contents, recipients } = rowsOf(messages, ids);
  const writes: Statement[] = [];
  for (let i = 0; i < rowsToInsert.length; i += ROWS_PER_INSERT) writes.push(tx('messages').insert(rowsToInsert.slice(i, i + ROWS_PER_INSERT)));
  for (let i = 0; i < contents.length; i += ROWS_PER_INSERT) writes.push(tx('message_contents').insert(contents.slice(i, i + ROWS_PER_INSERT)));
  for (let i = 0; i < recipients.length; i += ROWS_PER_INSERT) writes.push(tx('recipients').insert(recipients.slice(i, i + ROWS_PER_INSERT)));
  // Outside a transaction the writes are one statement, atomic on its own, when they fit in one.
  if (inTransaction(tx)) await runTogether(tx, [...writes, ...alongside]);
  else await runAtomically(tx, [...writes, ...alongside]);
  return ids;
}

export const messagesRepo = {
  /**
   * PostgreSQL: `count` new message ids, in ascending order, drawn from the sequence ahead of
   * `insertMany` (given to it as `drawn`), and the values of `read` (a one-column query) fetched
   * in the same round trip.
   */
  async drawIds(db: Conn, count: number, read?: Knex.QueryBuilder): Promise<{ ids: number[]; read: unknown[] }> {
    const also = read?.toSQL();
    const { rows } = (await db.raw(`select array(${DRAW_IDS}) as ids${also ? `, array(${also.sql}) as read` : ''}`, [
      count,
      ...((also?.bindings ?? []) as Knex.RawBinding[]),
    ])) as { rows: { ids: number[]; read?: unknown[] }[] };
    return { ids: rows[0]!.ids.map(Number).sort((a, b) => a - b), read: rows[0]!.read ?? [] };
  },
  /**
   * `count` new message ids drawn ahead (for `insertMany`'s `drawn`) with which of `addresses`
   * are suppressed on the stream (lowercased, as `suppressionsRepo.suppressedAmong` gives them),
   * in one round trip: on PostgreSQL, for up to 500 addresses. Null otherwise: SQLite takes the
   * ids as it inserts, and the caller reads the suppressions itself.
   */
  async drawIdsWithSuppressed(
    tx: Conn,
    count: number,
    workspaceId: number,
    stream: Stream,
    addresses: string[],
  ): Promise<{ ids: number[]; suppressed: Set<string> } | null> {
    if (!isPg(tx) || addresses.length > 500) return null;
    const { ids, read } = await messagesRepo.drawIds(tx, count, suppressionsRepo.amongQuery(tx, workspaceId, stream, addresses));
    return { ids, suppressed: new Set(read as string[]) };
  },
  /**
   * Inserts messages with their recipients in a few multi-row statements and returns their
   * ids in the order given. The ids are known before the rows are written (SQLite reads the
   * last one in the writing transaction; PostgreSQL draws them from the sequence and sends the
   * inserts as one statement, `insertManyPg`), so each row is written once with the Message-ID
   * named after its id. `alongside`:
   * writes of the same commit that go with the inserts (in the same round trip on PostgreSQL).
   * Given the database rather than a transaction (PostgreSQL only), the writes commit together on
   * their own; `alongside` then holds at most one write another commit could lock.
   */
  async insertMany(tx: Conn, messages: PlannedMessage[], alongside: Statement[] = [], drawn?: number[]): Promise<number[]> {
    for (const m of messages) {
      for (const r of m.recipients) {
        if (r.status !== 'queued' && r.status !== 'scheduled' && r.status !== 'suppressed') throw new Error(`A new recipient cannot be ${r.status}`);
      }
    }
    if (isPg(tx)) return insertManyPg(tx, messages, alongside, drawn);
    if (!inTransaction(tx)) throw new Error('on SQLite, messages are inserted in a transaction');
    // The ids are known before the insert, so each row is written once with its Message-ID
    // (setting it afterwards rewrote every new row and its index entry). The read and the
    // writes are one transaction: another connection's write in between makes the insert fail
    // (SQLite refuses to upgrade a stale snapshot), never reuse an id.
    const [{ last }] = (await tx.raw(
      "select max(coalesce((select seq from sqlite_sequence where name = 'messages'), 0), coalesce((select max(id) from messages), 0)) as last",
    )) as { last: number }[];
    const ids = messages.map((_, i) => Number(last) + 1 + i);
    const { rowsToInsert, contents, recipients } = rowsOf(messages, ids);
    for (let i = 0; i < rowsToInsert.length; i += ROWS_PER_INSERT) await insertRows(tx, 'messages', rowsToInsert.slice(i, i + ROWS_PER_INSERT));
    for (let i = 0; i < contents.length; i += ROWS_PER_INSERT) await insertRows(tx, 'message_contents', contents.slice(i, i + ROWS_PER_INSERT));
    for (let i = 0; i < recipients.length; i += ROWS_PER_INSERT) await insertRows(tx, 'recipients', recipients.slice(i, i + ROWS_PER_INSERT));
    await runTogether(tx, alongside);
    return ids;
  },
  byId: (db: Conn, id: number): Promise<MessageWithContent | undefined> => withContent(db).where('messages.id', id).first(),
  /** Several messages by id, in one query per 500. */
  async byIds(db: Conn, ids: number[]): Promise<Map<number, MessageWithContent>> {
    const out = new Map<number, MessageWithContent>();
    for (let i = 0; i < ids.length; i += 500) {
      for (const row of (await withContent(db).whereIn('messages.id', ids.slice(i, i + 500))) as MessageWithContent[]) out.set(row.id, row);
    }
    return out;
  },
  recipients: (db: Conn, messageId: number): Promise<RecipientRow[]> => db('recipients').where({ message_id: messageId }).orderBy('id'),
  /** Newest first; keyset on id so pages stay stable while rows are added. */
  list(db: Conn, f: MessageFilter): Promise<MessageRow[]> {
    const q = db('messages').where({ 'messages.workspace_id': f.workspaceId }).orderBy('messages.id', 'desc').limit(f.limit).select('messages.*');
    if (f.domain) q.where({ 'messages.domain': f.domain });
    if (f.status) q.where({ 'messages.status': f.status });
    if (f.stream) q.where({ 'messages.stream': f.stream });
    if (f.beforeId) q.where('messages.id', '<', f.beforeId);
    if (f.recipient || f.recipientStatus) {
      q.whereExists((sub) => {
        sub.select(db.raw('1')).from('recipients').whereRaw('recipients.message_id = messages.id');
        if (f.recipient) sub.whereRaw('lower(recipients.address) = ?', [f.recipient.toLowerCase()]);
        if (f.recipientStatus) sub.where('recipients.status', f.recipientStatus);
      });
    }
    return q;
  },
  /** Moves a message's recipients from one status to another; returns how many moved. */
  async setRecipientStatus(tx: Tx, messageId: number, from: RecipientStatus, to: RecipientStatus, at: number): Promise<number> {
    const n = await tx('recipients').where({ message_id: messageId, status: from }).update({ status: to, updated_at: at, due_at: null });
    await deriveMessageStatuses(tx, [messageId]);
    return n;
  },
  /** A recipient's final word (or a report that overrides it), its lease cleared. */
  async finishRecipient(tx: Tx, messageId: number, recipientId: number, status: RecipientStatus, at: number, patch: Partial<RecipientRow> = {}): Promise<void> {
    await tx('recipients')
      .where({ id: recipientId })
      .update({ status, updated_at: at, due_at: null, lease_owner: null, lease_until: null, ...patch });
    await deriveMessageStatuses(tx, [messageId]);
  },
  /** Drops the bodies of up to `limit` finished messages created before `before`; returns how many. */
  pruneBodies: (db: Conn, before: number, limit: number): Promise<number> =>
    db('message_contents')
      .whereIn(
        'message_id',
        db('messages')
          .join('message_contents', 'message_contents.message_id', 'messages.id')
          .select('messages.id')
          .where('messages.created_at', '<', before)
          .whereIn('messages.status', FINAL)
          .limit(limit),
      )
      .delete(),
};
