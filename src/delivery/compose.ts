import { randomBytes } from 'node:crypto';
import MailComposer from 'nodemailer/lib/mail-composer';
import { encodeWords, foldLines } from 'nodemailer/lib/mime-funcs';
import MimeNode from 'nodemailer/lib/mime-node';
import { dkimBodyHash, dkimSignatureField, normaliseMessage, splitMessage } from '../dkim/sign.ts';
import { readContent, readEnvelope, type FieldsContent, type MessageContent } from '../messages/content.ts';
import type { MessageRow } from '../store/messages.ts';

/** A text part a render step may produce per recipient (tracked links, an unsubscribe URL). */
export type Slot = 'html' | 'text';

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
 * attachment is encoded once, not once per recipient.
 */
export interface PreparedMessage {
  message: Pick<MessageRow, 'id' | 'workspace_id' | 'domain' | 'stream' | 'message_id_header'>;
  /** The stored text parts a render step starts from (null: none, or submitted MIME). */
  html: string | null;
  text: string | null;
  head: Buffer;
  body: (Buffer | Slot)[];
  /** Each slot's part as stored, and the body hash with them. */
  parts: Partial<Record<Slot, Buffer>>;
  bodyHash: string;
  /** A single-part message has no shared body to keep: a recipient's own text rebuilds it whole. */
  rebuild: ((parts: RecipientParts) => Promise<Buffer>) | null;
  size: number;
}

export interface DkimKey {
  domain: string;
  selector: string;
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

function compose(options: ConstructorParameters<typeof MailComposer>[0]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    new MailComposer(options).compile().build((err, raw) => (err ? reject(err) : resolve(raw)));
  });
}

/**
 * One text part (its Content-Type and transfer encoding with it) exactly as MailComposer embeds
 * it: built inside a multipart of its own, and cut out between the boundary lines.
 */
async function textPart(slot: Slot, content: string): Promise<Buffer> {
  const root = new MimeNode('multipart/alternative');
  root.createChild(`text/${slot === 'html' ? 'html' : 'plain'}; charset=utf-8`).setContent(content);
  const built = normaliseMessage(await root.build());
  const start = built.indexOf('\r\n\r\n') + 4;
  const delimiter = built.subarray(start, built.indexOf('\r\n', start)).toString('latin1');
  return built.subarray(start + delimiter.length + 2, built.lastIndexOf(`\r\n${delimiter}--`));
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
  return (parts: { html?: string | { raw: string }; text?: string | { raw: string } }, extra: Record<string, string> = {}) => ({
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
    headers: { ...content.headers, 'Feedback-ID': feedbackId(row, senderId), ...extra },
    disableFileAccess: true,
    disableUrlAccess: true,
  });
}

async function prepareFields(row: MessageRow, content: FieldsContent, senderId: string): Promise<PreparedMessage> {
  const options = fieldsOptions(row, content, senderId);
  const given = { ...(content.text !== null ? { text: content.text } : {}), ...(content.html !== null ? { html: content.html } : {}) };
  const multipart = content.attachments.length > 0 || (content.text !== null && content.html !== null);
  if (!multipart) {
    // One part: the body is that part, so nothing beyond the header is shared anyway.
    const whole = normaliseMessage(await compose(options(given)));
    const { head, body } = splitMessage(whole);
    const rebuild = async (p: RecipientParts) => normaliseMessage(await compose(options({ ...given, ...pick(p) }, p.headers)));
    return { message: message(row), html: content.html, text: content.text, head, body: [body], parts: {}, bodyHash: dkimBodyHash([body]), rebuild, size: whole.length };
  }
  // Markers in place of the text parts, so the rest is built (and encoded) once.
  const marker = (slot: Slot) => `mailsvc-${slot}-part-${randomBytes(12).toString('hex')}`;
  const markers: Partial<Record<Slot, string>> = {};
  const parts: Partial<Record<Slot, Buffer>> = {};
  for (const slot of ['text', 'html'] as const) {
    if (content[slot] === null) continue;
    markers[slot] = marker(slot);
    parts[slot] = await textPart(slot, content[slot]);
  }
  const raw = await compose(options(Object.fromEntries(Object.entries(markers).map(([slot, m]) => [slot, { raw: m }]))));
  const { head, body: shared } = splitMessage(normaliseMessage(raw));
  const body = splitAtMarkers(shared, markers);
  const filled = body.map((b) => (typeof b === 'string' ? parts[b]! : b));
  const size = head.length + filled.reduce((n, b) => n + b.length, 0);
  return { message: message(row), html: content.html, text: content.text, head, body, parts, bodyHash: dkimBodyHash(filled), rebuild: null, size };
}

function splitAtMarkers(body: Buffer, markers: Partial<Record<Slot, string>>): (Buffer | Slot)[] {
  const found = (Object.entries(markers) as [Slot, string][])
    .map(([slot, m]) => ({ slot, m, at: body.indexOf(m, 0, 'latin1') }))
    .sort((a, b) => a.at - b.at);
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
  return { message: message(row), html: null, text: null, head, body: [body], parts: {}, bodyHash: dkimBodyHash([body]), rebuild: null, size: head.length + body.length };
}

/** Builds a stored message's shared MIME once, for all its recipients. */
export async function prepareMessage(row: MessageRow, senderId: string): Promise<PreparedMessage> {
  const content: MessageContent | null = readContent(row.content);
  if (content === null) throw new Error(`message ${row.id} has no content left (pruned)`);
  if (content.kind === 'mime') return prepareMime(row, Buffer.from(content.raw, 'base64'), senderId);
  return prepareFields(row, content, senderId);
}

const pick = (p: RecipientParts) => ({ ...(p.html !== undefined ? { html: p.html } : {}), ...(p.text !== undefined ? { text: p.text } : {}) });

/**
 * The bytes one recipient gets: the shared parts, the recipient's own text parts and header
 * fields where a render step gave them, signed (DKIM, relaxed/relaxed) by the sending domain.
 * Only what differs is encoded or hashed again.
 */
export async function recipientCopy(prepared: PreparedMessage, own: RecipientParts, key: DkimKey, now: number): Promise<Buffer> {
  const sign = { domain: key.domain, selector: key.selector, privateKeyPem: key.privateKeyPem, now };
  const changed = (['html', 'text'] as const).filter((slot) => own[slot] !== undefined && own[slot] !== prepared[slot]);
  if (prepared.rebuild && changed.length > 0) {
    const { head, body } = splitMessage(await prepared.rebuild(own));
    return Buffer.concat([dkimSignatureField(head, dkimBodyHash([body]), sign), head, CRLF, body]);
  }
  const parts = { ...prepared.parts };
  for (const slot of changed) if (parts[slot]) parts[slot] = await textPart(slot, own[slot]!);
  const body = prepared.body.map((b) => (typeof b === 'string' ? parts[b]! : b));
  const extra = own.headers && Object.keys(own.headers).length > 0 ? headerBlock(own.headers) : null;
  const head = extra ? Buffer.concat([prepared.head, extra]) : prepared.head;
  const bodyHash = changed.length > 0 ? dkimBodyHash(body) : prepared.bodyHash;
  return Buffer.concat([dkimSignatureField(head, bodyHash, sign), head, CRLF, ...body]);
}
