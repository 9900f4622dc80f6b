import { formatMailbox, type Mailbox } from './address.ts';

/**
 * The content model: what a message is made of, typed once. Both entry points write through it
 * (the HTTP API gives fields, SMTP submission gives raw MIME) and every reader (delivery's MIME
 * build, the API's views) reads through it, so the stored JSON has one shape and one owner.
 */

export interface Attachment {
  filename: string;
  /** Base64, as given. */
  content: string;
  contentType: string;
}

/** A message given as fields (POST /emails): the MIME is built by us at send time. */
export interface FieldsContent {
  kind: 'fields';
  html: string | null;
  text: string | null;
  /** The customer's own header fields; the service's own are refused at validation. */
  headers: Record<string, string>;
  attachments: Attachment[];
}

/**
 * A message given as MIME (SMTP submission), sent as submitted: the fields it must not
 * carry (Bcc, Return-Path, X-Mailsvc-*) are removed before it is stored.
 */
export interface MimeContent {
  kind: 'mime';
  /** The message bytes. */
  raw: Buffer;
}

export type MessageContent = FieldsContent | MimeContent;

/** Who a message is addressed to, as shown by the API (and, for fields, written in its header). */
export interface MessageEnvelope {
  to: string[];
  cc: string[];
  bcc: string[];
  reply_to: string[];
  tags: { name: string; value: string }[];
  /** Absent in rows written before messages had metadata. */
  metadata?: Record<string, string>;
}

/**
 * The stored columns the content model owns: `message_contents.content`, in a row of its own so
 * that a message's status changes do not rewrite it (migration 012), `message_contents.raw`,
 * the bytes of submitted MIME (migration 024), and `messages.envelope`.
 */
export interface StoredContent {
  content: string;
  raw: Buffer | null;
  envelope: string;
}

export function mimeContent(raw: Buffer): MimeContent {
  return { kind: 'mime', raw };
}

/** `content` of submitted MIME, whose bytes are in `raw`. */
const MIME_MARKER = JSON.stringify({ kind: 'mime' });

export function storeContent(
  content: MessageContent,
  addressing: { to: Mailbox[]; cc: Mailbox[]; bcc: Mailbox[]; replyTo: Mailbox[]; tags: MessageEnvelope['tags']; metadata: Record<string, string> },
): StoredContent {
  const envelope: MessageEnvelope = {
    to: addressing.to.map(formatMailbox),
    cc: addressing.cc.map(formatMailbox),
    bcc: addressing.bcc.map(formatMailbox),
    reply_to: addressing.replyTo.map(formatMailbox),
    tags: addressing.tags,
    ...(Object.keys(addressing.metadata).length > 0 ? { metadata: addressing.metadata } : {}),
  };
  // MIME goes to the `raw` column as it is: no base64 and no JSON string around it.
  const stored = content.kind === 'mime' ? { content: MIME_MARKER, raw: content.raw } : { content: JSON.stringify(content), raw: null };
  return { ...stored, envelope: JSON.stringify(envelope) };
}

/** MIME as rows before migration 024 held it: base64 inside the JSON. */
interface InlineMime {
  kind: 'mime';
  raw?: string;
}

/**
 * The content of a stored message (`content` and `raw` of its row), or null once retention
 * pruned it. Rows written before the content had a `kind` hold fields; rows of submitted MIME
 * written before migration 024 hold its bytes in base64 inside `content`. `raw` may come as a
 * Uint8Array (a row that crossed to a thread) and is used without a copy.
 */
export function readContent(stored: string | null, raw: Uint8Array | null = null): MessageContent | null {
  if (stored === null) return null;
  const parsed = JSON.parse(stored) as FieldsContent | InlineMime | Omit<FieldsContent, 'kind'>;
  if (!('kind' in parsed)) return { kind: 'fields', ...parsed };
  if (parsed.kind === 'fields') return parsed;
  if (raw !== null) return { kind: 'mime', raw: Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength) };
  if (parsed.raw === undefined) throw new Error('stored MIME content has no bytes');
  return { kind: 'mime', raw: Buffer.from(parsed.raw, 'base64') };
}

export function readEnvelope(stored: string): MessageEnvelope {
  return JSON.parse(stored) as MessageEnvelope;
}

/** A message's tags and metadata as its webhook payloads carry them; null when it has neither. */
export function labelsOf(envelope: MessageEnvelope): { tags: MessageEnvelope['tags']; metadata: Record<string, string> } | null {
  const metadata = envelope.metadata ?? {};
  return envelope.tags.length > 0 || Object.keys(metadata).length > 0 ? { tags: envelope.tags, metadata } : null;
}
