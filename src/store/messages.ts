import { insertedId, type Conn, type Tx } from './db.ts';
import { deriveMessageStatuses, derivedStatus } from './messageStatus.ts';
import type { MessageStatus, RecipientStatus } from '../messages/status.ts';

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
  /** JSON of MessageContent (src/messages/content.ts); null once pruned. */
  content: string | null;
  /** JSON of MessageEnvelope (src/messages/content.ts). */
  envelope: string;
  message_id_header: string;
  created_at: number;
  scheduled_at: number | null;
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
  due_at: number | null;
  first_due_at: number | null;
  lease_owner: string | null;
  lease_until: number | null;
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

export const messagesRepo = {
  /** A message and its recipients; the message's status is derived from theirs. */
  /**
   * Inserts a message with its recipients and derives its status; `messageIdFor` names the
   * Message-ID header once the id is known. No other transaction can see the new row yet, so
   * one unlocked update does both.
   */
  async insert(
    tx: Tx,
    row: Omit<MessageRow, 'id' | 'status'>,
    recipients: Omit<RecipientRow, 'id' | 'message_id'>[],
    messageIdFor?: (id: number) => string,
  ): Promise<number> {
    const [inserted] = await tx('messages').insert({ ...row, status: 'queued' }).returning('id');
    const id = insertedId(inserted);
    if (recipients.length > 0) await tx('recipients').insert(recipients.map((r) => ({ ...r, message_id: id })));
    await tx('messages')
      .where({ id })
      .update({ status: derivedStatus(tx), ...(messageIdFor ? { message_id_header: messageIdFor(id) } : {}) });
    return id;
  },
  byId: (db: Conn, id: number): Promise<MessageRow | undefined> => db('messages').where({ id }).first(),
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
    db('messages')
      .whereIn('id', db('messages').select('id').where('created_at', '<', before).whereNotNull('content').whereIn('status', FINAL).limit(limit))
      .update({ content: null }),
};
