import type { Knex } from 'knex';
import { insertRows, inTransaction, isPg, runAtomically, runTogether, type Conn, type Statement, type Tx } from './db.ts';
import { deriveMessageStatuses } from './messageStatus.ts';
import { subjectIndex } from './subject-index.ts';
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
 * rewrite it): JSON of MessageContent (src/messages/content.ts), null once pruned, and the bytes
 * of submitted MIME (`raw`, null for other content; `readContent` reads the two together).
 */
export interface MessageWithContent extends MessageRow {
  content: string | null;
  raw: Buffer | null;
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

/** A tag (`tag`: name and value; `tag_name`: any value, stored with value '') or a metadata entry. */
export interface LabelFilter {
  kind: 'tag' | 'tag_name' | 'metadata';
  name: string;
  value: string;
}

/** The search filters of SPEC §15, parsed (`messages/search.ts`). */
export interface MessageSearch {
  /** The sender address, lowercased. */
  from?: string;
  /** Contained in the subject, compared without case. */
  subject?: string;
  /** Every one must match. */
  labels?: LabelFilter[];
  /** created_at at or after, ms. */
  createdAfter?: number;
  /** created_at strictly before, ms. */
  createdBefore?: number;
}

export interface MessageFilter extends MessageSearch {
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
  /** Its `message_labels` rows (tags and metadata, for search). */
  labels: LabelFilter[];
}

/** A new message's status, by the rule its later derivations follow (`messages/status.ts`). */
const initialStatus = (recipients: { status: RecipientStatus }[]): MessageStatus => messageStatusOf(recipients.map((r) => r.status));

const ROWS_PER_INSERT = 200;

/** The `message_contents` rows of new messages, given their ids in the same order. */
const contentRows = (messages: PlannedMessage[], ids: number[]) =>
  messages.flatMap(({ row: { content, raw } }, i) => (content === null ? [] : [{ message_id: ids[i]!, content, raw }]));

/** The `message_labels` rows of new messages, given their ids in the same order. */
const labelRows = (messages: PlannedMessage[], ids: number[]) =>
  messages.flatMap((m, i) => m.labels.map((l) => ({ message_id: ids[i]!, workspace_id: m.row.workspace_id, ...l })));

/** The rows of new messages whose ids are known: each written once, with its Message-ID. */
function rowsOf(messages: PlannedMessage[], ids: number[]) {
  const rowsToInsert = messages.map(({ row: { content: _, raw: __, ...row }, recipients, messageIdFor }, i) => ({
    ...row,
    id: ids[i]!,
    status: initialStatus(recipients),
    ...(messageIdFor ? { message_id_header: messageIdFor(ids[i]!) } : {}),
  }));
  const recipients = messages.flatMap((m, i) => m.recipients.map((r) => ({ ...r, message_id: ids[i]! })));
  return { rowsToInsert, contents: contentRows(messages, ids), recipients, labels: labelRows(messages, ids) };
}

/** The message with its body, as one row. */
const withContent = (db: Conn) =>
  db('messages').leftJoin('message_contents', 'message_contents.message_id', 'messages.id').select('messages.*', 'message_contents.content', 'message_contents.raw');

/**
 * PostgreSQL: the ids are drawn from the sequence first, so each row is inserted once with its
 * Message-ID. Setting it afterwards rewrote every new row and its index entries (the header is
 * indexed, so the update is not a heap-only one): more WAL and CPU per message.
 */
const DRAW_IDS = "select nextval(pg_get_serial_sequence('messages', 'id'))::integer from generate_series(1, ?)";

async function insertManyPg(tx: Conn, messages: PlannedMessage[], alongside: Statement[], drawn?: number[]): Promise<number[]> {
  const ids = drawn ?? (await messagesRepo.drawIds(tx, messages.length)).ids;
  if (ids.length !== messages.length) throw new Error(`${ids.length} ids drawn for ${messages.length} messages`);
  const { rowsToInsert, contents, recipients, labels } = rowsOf(messages, ids);
  const writes: Statement[] = [];
  for (let i = 0; i < rowsToInsert.length; i += ROWS_PER_INSERT) writes.push(tx('messages').insert(rowsToInsert.slice(i, i + ROWS_PER_INSERT)));
  for (let i = 0; i < contents.length; i += ROWS_PER_INSERT) writes.push(tx('message_contents').insert(contents.slice(i, i + ROWS_PER_INSERT)));
  for (let i = 0; i < recipients.length; i += ROWS_PER_INSERT) writes.push(tx('recipients').insert(recipients.slice(i, i + ROWS_PER_INSERT)));
  for (let i = 0; i < labels.length; i += ROWS_PER_INSERT) writes.push(tx('message_labels').insert(labels.slice(i, i + ROWS_PER_INSERT)));
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
    const { rowsToInsert, contents, recipients, labels } = rowsOf(messages, ids);
    for (let i = 0; i < rowsToInsert.length; i += ROWS_PER_INSERT) await insertRows(tx, 'messages', rowsToInsert.slice(i, i + ROWS_PER_INSERT));
    for (let i = 0; i < contents.length; i += ROWS_PER_INSERT) await insertRows(tx, 'message_contents', contents.slice(i, i + ROWS_PER_INSERT));
    for (let i = 0; i < recipients.length; i += ROWS_PER_INSERT) await insertRows(tx, 'recipients', recipients.slice(i, i + ROWS_PER_INSERT));
    for (let i = 0; i < labels.length; i += ROWS_PER_INSERT) await insertRows(tx, 'message_labels', labels.slice(i, i + ROWS_PER_INSERT));
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
  /**
   * Newest first; keyset on id so pages stay stable while rows are added. The search filters
   * (SPEC §15) each have an index that yields matches newest first (migration 019), and the
   * first of them drives the query so a page stops after its rows whether matches are common or
   * rare: a label (tag or metadata) walks `message_labels_search`; else, on SQLite, a subject of
   * 3 or more characters walks the trigram index (`message_subjects`); else the sender walks
   * `messages_workspace_from`. Everything else is checked on the rows found.
   *
   * A created_at range with none of those walks `messages_workspace_created`, and its page is
   * in created_at order (newest first, ties by id), the cursor's message giving the time to
   * continue from: ids only roughly follow created_at (each process stamps its own clock), and
   * in id order a range far back read every newer message first, or every one of the range.
   */
  async list(db: Conn, f: MessageFilter): Promise<MessageRow[]> {
    const pg = isPg(db);
    if (pg && !inTransaction(db)) {
      // PostgreSQL planned parallel workers for searches it costed high, and starting them took
      // longer (about 75 ms on the busy 2-vCPU machine) than the 2 ms the page needed.
      return db.transaction(async (tx) => {
        await tx.raw('set local max_parallel_workers_per_gather = 0');
        return messagesRepo.list(tx, f);
      });
    }
    const [first, ...labels] = f.labels ?? [];
    const bySubjectIndex = !pg && !first && f.subject !== undefined && [...f.subject].length >= 3;
    const byCreated = !first && !bySubjectIndex && f.from === undefined && (f.createdAfter !== undefined || f.createdBefore !== undefined);
    // The cursor's message's time, where a page in created_at order continues from.
    const cursorAt =
      byCreated && f.beforeId ? ((await db('messages').where('id', f.beforeId).first('created_at')) as { created_at: number | string } | undefined) : undefined;
    let q: Knex.QueryBuilder;
    let key = 'messages.id';
    if (first) {
      q = db('message_labels as l0')
        .join('messages', 'messages.id', 'l0.message_id')
        .where({ 'l0.workspace_id': f.workspaceId, 'l0.kind': first.kind, 'l0.name': first.name, 'l0.value': first.value });
      key = 'l0.message_id';
    } else if (bySubjectIndex) {
      // Messages stored since the last batch are indexed first (`subjectIndex`). A phrase of the
      // trigram tokenizer matches its text anywhere, as a substring, without case.
      await subjectIndex.catchUp(db);
      q = db('message_subjects')
        .join('messages', 'messages.id', 'message_subjects.rowid')
        .whereRaw('message_subjects match ?', [`"${f.subject!.replaceAll('"', '""')}"`]);
      key = 'message_subjects.rowid';
    } else {
      q = db('messages');
    }
    q.where('messages.workspace_id', f.workspaceId).limit(f.limit);
    if (byCreated) {
      q.orderBy([
        { column: 'messages.created_at', order: 'desc' },
        { column: 'messages.id', order: 'desc' },
      ]);
      if (f.beforeId && !cursorAt) return [];
      if (cursorAt) {
        const at = Number(cursorAt.created_at);
        q.where('messages.created_at', '<=', at).where((w) => w.where('messages.created_at', '<', at).orWhere('messages.id', '<', f.beforeId!));
      }
    } else {
      q.orderBy(key, 'desc');
      if (f.beforeId) q.where(key, '<', f.beforeId);
    }
    if (f.domain) q.where({ 'messages.domain': f.domain });
    if (f.status) q.where({ 'messages.status': f.status });
    if (f.stream) q.where({ 'messages.stream': f.stream });
    if (f.recipient || f.recipientStatus) {
      q.whereExists((sub) => {
        sub.select(db.raw('1')).from('recipients').whereRaw('recipients.message_id = messages.id');
        if (f.recipient) sub.whereRaw('lower(recipients.address) = ?', [f.recipient.toLowerCase()]);
        if (f.recipientStatus) sub.where('recipients.status', f.recipientStatus);
      });
    }
    for (const l of labels) {
      q.whereExists((sub) => {
        sub.select(db.raw('1')).from('message_labels as l').whereRaw('l.message_id = messages.id').where({ 'l.kind': l.kind, 'l.name': l.name, 'l.value': l.value });
      });
    }
    if (f.from !== undefined) q.whereRaw('lower(messages.from_address) = ?', [f.from]);
    if (f.subject !== undefined && !bySubjectIndex) {
      // SQLite's LIKE ignores the case of ASCII letters; PostgreSQL's ILIKE that of all of them.
      q.whereRaw(`messages.subject ${pg ? 'ilike' : 'like'} ? escape '\\'`, [`%${f.subject.replace(/[\\%_]/g, '\\$&')}%`]);
    }
    // On SQLite, `+` keeps its planner from walking the range's index and sorting every match
    // where another filter's newest-first walk stops after a page.
    const created = pg || byCreated ? 'messages.created_at' : '+messages.created_at';
    if (f.createdAfter !== undefined) q.whereRaw(`${created} >= ?`, [f.createdAfter]);
    if (f.createdBefore !== undefined) q.whereRaw(`${created} < ?`, [f.createdBefore]);
    return q.select('messages.*');
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
