import { insertedId, type Conn } from './db.ts';
import { deriveMessageStatus, type MessageStatus, type RecipientStatus } from '../messages/status.ts';

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

export const messagesRepo = {
  async insert(db: Conn, row: Omit<MessageRow, 'id'>): Promise<number> {
    const [inserted] = await db('messages').insert(row).returning('id');
    return insertedId(inserted);
  },
  async setMessageId(db: Conn, id: number, header: string): Promise<void> {
    await db('messages').where({ id }).update({ message_id_header: header });
  },
  async insertRecipients(db: Conn, rows: Omit<RecipientRow, 'id'>[]): Promise<void> {
    if (rows.length > 0) await db('recipients').insert(rows);
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
  /** Re-derives and stores a message's status from its recipients; returns it. */
  async refreshStatus(db: Conn, messageId: number): Promise<MessageStatus> {
    const rows: { status: RecipientStatus }[] = await db('recipients').where({ message_id: messageId }).select('status');
    const status = deriveMessageStatus(rows.map((r) => r.status));
    await db('messages').where({ id: messageId }).update({ status });
    return status;
  },
  async setRecipientStatus(db: Conn, messageId: number, from: RecipientStatus, to: RecipientStatus, at: number): Promise<number> {
    return db('recipients').where({ message_id: messageId, status: from }).update({ status: to, updated_at: at, due_at: null });
  },
};
