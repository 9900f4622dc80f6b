import MailComposer from 'nodemailer/lib/mail-composer';
import { encodeWords, foldLines } from 'nodemailer/lib/mime-funcs';
import { randomHex } from '../core/random.ts';
import type { DkimAlgorithm } from '../dkim/keys.ts';
import { dkimBodyHash, dkimSignatureFields, normaliseMessage, splitMessage } from '../dkim/sign.ts';
import { readContent, readEnvelope, type FieldsContent, type MessageContent } from '../messages/content.ts';
import type { MessageRow, MessageWithContent } from '../store/messages.ts';
import { writableInMemory, writeMime } from './mime-write.ts';
import { plainAlternative, plainHead } from './plain-head.ts';
import { encodeText, type EncodedPart, type Slot } from './text-part.ts';

/** A text part a render step may produce per recipient (tracked links, an unsubscribe URL). */
export type { Slot };

/** What differs for one recipient; anything left out is the message's own. */
export interface RecipientParts {
  html?: string;
  text?: string;
  /** Added below the common header fields, e.g. List-Unsubscribe with the recipient's token. */
  headers?: Record<string, string>;
}

/**
 * A message built once for all its recipients, normalised for signing (CRLF, no line over 998
 * octets). The header block and every body part but the text ones are shared bytes; the text
 * parts sit in the body as slots so a recipient's own HTML is encoded alone, and a 1 MB
 * attachment is encoded once, not once per recipient. The stored text parts themselves are
 * encoded (and the shared body hashed) only when a recipient is sent them: a message whose every
 * recipient gets its own tracked HTML never encodes the stored HTML.
 */
export interface PreparedMessage {
  message: Pick<MessageRow, 'id' | 'workspace_id' | 'domain' | 'stream' | 'message_id_header'>;
  /** The stored text parts a render step starts from (null: none, or submitted MIME). */
  html: string | null;
  text: string | null;
  head: Buffer;
  body: (Buffer | Slot)[];
  /**
   * A message of one text part has no multipart around it: that part's Content-Type is in the
   * head and its transfer encoding, which depends on the content, is added per copy.
   */
  single: Slot | null;
  /** The stored text part of a slot, encoded on first use. */
  shared(slot: Slot): EncodedPart;
  /** The DKIM body hash of the copy that has every stored part, computed on first use. */
  sharedBodyHash(): string;
  size: number;
}

export interface DkimKey {
  domain: string;
  selector: string;
  algorithm: DkimAlgorithm;
  privateKeyPem: string;
}

const CRLF = Buffer.from('\r\n');

/**
 * Gmail's feedback loop groups complaints by the fields of this header, right to left: sender
 * id, then mail type, then customer. Nothing unique per message goes in (Gmail ignores ids that
 * identify single messages), so a workspace's stream is the unit a complaint rate is shown for.
 */
export function feedbackId(message: Pick<MessageRow, 'workspace_id' | 'stream'>, senderId: string): string {
  return `${message.stream}:${message.workspace_id}:${senderId}`;
}

type ComposeOptions = ConstructorParameters<typeof MailComposer>[0];

async function compose(options: ComposeOptions): Promise<Buffer> {
  const root = new MailComposer(options).compile();
  return writableInMemory(root) ? writeMime(root) : root.build();
}

/** The header block nodemailer writes for a message, without encoding its body. */
function composeHead(options: ComposeOptions): Buffer {
  return Buffer.from(`${new MailComposer(options).compile().buildHeaders()}\r\n\r\n`);
}

/** Header fields added for one recipient, encoded and folded (RFC 2047, RFC 5322 §2.2.3). */
function headerBlock(headers: Record<string, string>): Buffer {
  const lines = Object.entries(headers).map(([name, value]) => `${foldLines(`${name}: ${encodeWords(value, 'Q', 52)}`, 76)}\r\n`);
  return Buffer.from(lines.join(''), 'latin1');
}

function message(row: MessageRow): PreparedMessage['message'] {
  return { id: row.id, workspace_id: row.workspace_id, domain: row.domain, stream: row.stream, message_id_header: row.message_id_header };
}

/**
 * The MIME of a message given as fields: the headers the service owns (From, To, Cc, Reply-To,
 * Subject, Date, the stored Message-ID, Feedback-ID), the customer's own, the body parts. Bcc
 * recipients are never named in the header. `parts` stand in for the stored text parts.
 */
function fieldsOptions(row: MessageRow, content: FieldsContent, senderId: string) {
  const envelope = readEnvelope(row.envelope);
  return (parts: { html?: string | { raw: string }; text?: string | { raw: string } }) => ({
    from: row.from_header,
    to: envelope.to.length > 0 ? envelope.to : undefined,
    cc: envelope.cc.length > 0 ? envelope.cc : undefined,
    replyTo: envelope.reply_to.length > 0 ? envelope.reply_to : undefined,
    subject: row.subject,
    // The origination date (RFC 5322 §3.6.1): when the message was ready, the same on every retry.
    date: new Date(row.scheduled_at ?? row.created_at),
    messageId: row.message_id_header,
    ...parts,
    attachments: content.attachments.map((a) => ({ filename: a.filename, content: a.content, encoding: 'base64', contentType: a.contentType })),
    headers: { ...content.headers, 'Feedback-ID': feedbackId(row, senderId) },
    disableFileAccess: true,
    disableUrlAccess: true,
  });
}

/** The lazily encoded text parts and body hash of a prepared message. */
function sharedParts(content: Pick<FieldsContent, 'html' | 'text'>, body: (Buffer | Slot)[], single: Slot | null) {
  const encoded: Partial<Record<Slot, EncodedPart>> = {};
  let hash: string | null = null;
  const shared = (slot: Slot): EncodedPart => (encoded[slot] ??= encodeText(slot, content[slot] ?? ''));
  return {
    shared,
    sharedBodyHash: () => (hash ??= dkimBodyHash(bodyBytes(body, shared, single))),
  };
}

/** The body of one copy, each slot filled with its part: whole (multipart) or its body alone. */
function bodyBytes(body: (Buffer | Slot)[], part: (slot: Slot) => EncodedPart, single: Slot | null): Buffer[] {
  return body.map((b) => {
    if (typeof b !== 'string') return b;
    const p = part(b);
    return Buffer.from(single ? p.body : `${p.contentType}${p.transferEncoding}\r\n${p.body}`, 'latin1');
  });
}

const TRANSFER_ENCODING = /^Content-Transfer-Encoding:[^\r\n]*\r\n/im;

async function prepareFields(row: MessageRow, content: FieldsContent, senderId: string): Promise<PreparedMessage> {
  const options = fieldsOptions(row, content, senderId);
  const slots = (['text', 'html'] as const).filter((slot) => content[slot] !== null);
  const stored = slots.reduce((n, slot) => n + Buffer.byteLength(content[slot]!), 0);
  const prepared = (head: Buffer, body: (Buffer | Slot)[], single: Slot | null, size: number): PreparedMessage => ({
    message: message(row),
    html: content.html,
    text: content.text,
    head,
    body,
    single,
    ...sharedParts(content, body, single),
    size,
  });
  if (content.attachments.length === 0 && slots.length === 1) {
    // One part, so the body is that part and its transfer encoding comes with each copy's own.
    const single = slots[0]!;
    const head = Buffer.from(singlePartHead(options({ [single]: 'x' })), 'latin1');
    const body = [single];
    return prepared(head, body, single, head.length + stored);
  }
  const frame = content.attachments.length === 0 && slots.length === 2 ? plainAlternative(options({ text: 'x', html: 'x' }), randomHex(8)) : null;
  if (frame) {
    // A text and an HTML part with plain fields: the frame written directly, as nodemailer would.
    const head = Buffer.from(frame.head, 'latin1');
    const body = [Buffer.from(frame.open), 'text' as const, Buffer.from(frame.between), 'html' as const, Buffer.from(frame.close)];
    return prepared(head, body, null, head.length + frame.open.length + frame.between.length + frame.close.length + stored);
  }
  // Markers in place of the text parts, so the rest is built (and encoded) once.
  const marker = (slot: Slot) => `mailsvc-${slot}-part-${randomHex(12)}`;
  const markers: Partial<Record<Slot, string>> = {};
  for (const slot of slots) markers[slot] = marker(slot);
  const raw = await compose(options(Object.fromEntries(Object.entries(markers).map(([slot, m]) => [slot, { raw: m }]))));
  const { head, body: shared } = splitMessage(normaliseMessage(raw));
  const body = splitAtMarkers(shared, markers);
  return prepared(head, body, null, head.length + shared.length + stored);
}

/**
 * The head of a one-part message, without Content-Transfer-Encoding, given the builder's options
 * with a stand-in for the content (the head does not depend on it but for the transfer encoding,
 * which is dropped). Written directly when no field needs encoding, else built by nodemailer.
 */
function singlePartHead(options: NonNullable<ComposeOptions>): string {
  const plain = plainHead(options);
  if (plain !== null) return plain;
  const { head } = splitMessage(normaliseMessage(composeHead(options)));
  return head.toString('latin1').replace(TRANSFER_ENCODING, '');
}

function splitAtMarkers(body: Buffer, markers: Partial<Record<Slot, string>>): (Buffer | Slot)[] {
  const found = (Object.entries(markers) as [Slot, string][]).map(([slot, m]) => ({ slot, m, at: body.indexOf(m, 0, 'latin1') })).sort((a, b) => a.at - b.at);
  const out: (Buffer | Slot)[] = [];
  let from = 0;
  for (const { slot, m, at } of found) {
    if (at < 0) throw new Error(`the ${slot} part is missing from the built message`);
    out.push(body.subarray(from, at), slot);
    from = at + m.length;
  }
  out.push(body.subarray(from));
  return out;
}

/** Submitted MIME is sent as submitted; only Feedback-ID is ours to add. */
function prepareMime(row: MessageRow, raw: Buffer, senderId: string): PreparedMessage {
  const whole = normaliseMessage(raw);
  const { head: submitted, body } = splitMessage(whole);
  const head = Buffer.concat([submitted, headerBlock({ 'Feedback-ID': feedbackId(row, senderId) })]);
  const parts = sharedParts({ html: null, text: null }, [body], null);
  return { message: message(row), html: null, text: null, head, body: [body], single: null, ...parts, size: head.length + body.length };
}

/** Builds a stored message's shared MIME once, for all its recipients. */
export async function prepareMessage(row: MessageWithContent, senderId: string): Promise<PreparedMessage> {
  const content: MessageContent | null = readContent(row.content, row.raw);
  if (content === null) throw new Error(`message ${row.id} has no content left (pruned)`);
  if (content.kind === 'mime') return prepareMime(row, content.raw, senderId);
  return prepareFields(row, content, senderId);
}

/**
 * The bytes one recipient gets: the shared parts, the recipient's own text parts and header
 * fields where a render step gave them, signed (DKIM, relaxed/relaxed) by the sending domain
 * with each of its signing keys (an RSA and an Ed25519 key: two signatures over one body hash).
 * Only what differs is encoded or hashed again.
 */
export function recipientCopy(prepared: PreparedMessage, own: RecipientParts, keys: DkimKey[], now: number): Buffer {
  if (keys.length === 0) throw new Error(`message ${prepared.message.id}: its sending domain has no active DKIM key`);
  const sign = keys.map((key) => ({ domain: key.domain, selector: key.selector, algorithm: key.algorithm, privateKeyPem: key.privateKeyPem, now }));
  const mine: Partial<Record<Slot, EncodedPart>> = {};
  for (const slot of ['html', 'text'] as const) {
    const text = own[slot];
    if (text !== undefined && text !== prepared[slot] && prepared.body.includes(slot)) mine[slot] = encodeText(slot, text);
  }
  const { head, body } = copyOf(prepared, (slot) => mine[slot] ?? prepared.shared(slot), own.headers);
  const bodyHash = Object.keys(mine).length > 0 ? dkimBodyHash(body) : prepared.sharedBodyHash();
  return Buffer.concat([...dkimSignatureFields(head, bodyHash, sign), head, CRLF, ...body]);
}

/** The message as every recipient gets it before rendering and signing: the stored parts, no signature. */
export function unsignedCopy(prepared: PreparedMessage): Buffer {
  const { head, body } = copyOf(prepared, prepared.shared);
  return Buffer.concat([head, CRLF, ...body]);
}

function copyOf(prepared: PreparedMessage, part: (slot: Slot) => EncodedPart, headers?: Record<string, string>): { head: Buffer; body: Buffer[] } {
  const body = bodyBytes(prepared.body, part, prepared.single);
  const fields = [prepared.head];
  if (prepared.single) fields.push(Buffer.from(part(prepared.single).transferEncoding, 'latin1'));
  if (headers && Object.keys(headers).length > 0) fields.push(headerBlock(headers));
  return { head: fields.length === 1 ? prepared.head : Buffer.concat(fields), body };
}
