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
  /** The message bytes, base64. */
  raw: string;
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
 * that a message's status changes do not rewrite it (migration 012), and `messages.envelope`.
 */
export interface StoredContent {
  content: string;
  envelope: string;
}

export function mimeContent(raw: Buffer): MimeContent {
  return { kind: 'mime', raw: raw.toString('base64') };
}

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
  return { content: JSON.stringify(content), envelope: JSON.stringify(envelope) };
}

/**
 * The content of a stored message, or null once retention pruned it. Rows written before the
 * content had a `kind` hold fields.
 */
export function readContent(stored: string | null): MessageContent | null {
  if (stored === null) return null;
  const parsed = JSON.parse(stored) as MessageContent | Omit<FieldsContent, 'kind'>;
  return 'kind' in parsed ? parsed : { kind: 'fields', ...parsed };
}

export function readEnvelope(stored: string): MessageEnvelope {
  return JSON.parse(stored) as MessageEnvelope;
}

/** A message's tags and metadata as its webhook payloads carry them; null when it has neither. */
export function labelsOf(envelope: MessageEnvelope): { tags: MessageEnvelope['tags']; metadata: Record<string, string> } | null {
  const metadata = envelope.metadata ?? {};
  return envelope.tags.length > 0 || Object.keys(metadata).length > 0 ? { tags: envelope.tags, metadata } : null;
}
