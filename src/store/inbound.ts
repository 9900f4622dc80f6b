import { insertedId, type Conn } from './db.ts';
import type { MessageRow, RecipientRow } from './messages.ts';

export type InboundOutcome = 'applied' | 'duplicate' | 'no_effect' | 'uncorrelated' | 'unparsed';
export type InboundProof = 'verp' | 'unsubscribe' | 'message_id';
/** Which bound cut a report's stored raw bytes (null: all received bytes are kept). */
export type RawBound = 'max_size' | 'unproven' | 'ip_daily_cap';

export interface InboundReportRow {
  id: number;
  received_at: number;
  rcpt: string;
  mail_from: string;
  remote_ip: string;
  helo: string | null;
  size: number;
  truncated: boolean;
  sha256: string;
  kind: string;
  feedback_type: string | null;
  proof: InboundProof | null;
  workspace_id: number | null;
  email_id: number | null;
  recipient_id: number | null;
  outcome: InboundOutcome;
  effect: string;
  raw: Buffer;
  /** Bytes of `raw`, what the per-IP daily cap sums. */
  stored_bytes: number;
  raw_bound: RawBound | null;
}

export const inboundRepo = {
  async insert(db: Conn, row: Omit<InboundReportRow, 'id' | 'stored_bytes' | 'raw_bound'> & { raw_bound?: RawBound | null }): Promise<number> {
    const [inserted] = await db('inbound_reports')
      .insert({ ...row, raw_bound: row.raw_bound ?? null, stored_bytes: row.raw.length })
      .returning('id');
    return insertedId(inserted);
  },
  /**
   * Whether the same bytes already had an effect: a sender that lost our 250 sends them again,
   * and one report addressed to two of our addresses (b+ and fbl@) is still one report.
   */
  async appliedBefore(db: Conn, sha256: string): Promise<boolean> {
    const row = await db('inbound_reports').where({ sha256, outcome: 'applied' }).first('id');
    return row !== undefined;
  },
  /** The recipient row a VERP or unsubscribe token names, with its message. */
  async recipientWithMessage(db: Conn, recipientId: number): Promise<{ message: MessageRow; recipient: RecipientRow } | null> {
    const recipient: RecipientRow | undefined = await db('recipients').where({ id: recipientId }).first();
    if (!recipient) return null;
    const message: MessageRow | undefined = await db('messages').where({ id: recipient.message_id }).first();
    return message ? { message, recipient } : null;
  },
  /** Messages whose Message-ID header is exactly `header` (at most two: more is ambiguous anyway). */
  messagesByMessageId: (db: Conn, header: string): Promise<MessageRow[]> => db('messages').where({ message_id_header: header }).orderBy('id').limit(2),
  /** The first `limit` recipient rows of a message (two tell whether it had exactly one). */
  recipientsOf: (db: Conn, messageId: number, limit: number): Promise<RecipientRow[]> => db('recipients').where({ message_id: messageId }).orderBy('id').limit(limit),
  /** Raw bytes stored for reports from `remoteIp` received at or after `since`. */
  async bytesStoredSince(db: Conn, remoteIp: string, since: number): Promise<number> {
    const row = await db('inbound_reports').where({ remote_ip: remoteIp }).andWhere('received_at', '>=', since).sum({ total: 'stored_bytes' }).first();
    return Number(row?.total ?? 0);
  },
  /** Raw reports are message bodies: pruned with them after `retention.days`. */
  prune: (db: Conn, before: number): Promise<number> => db('inbound_reports').where('received_at', '<', before).delete(),
};
