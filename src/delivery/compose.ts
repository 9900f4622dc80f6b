import MailComposer from 'nodemailer/lib/mail-composer';
import { signMessage } from '../dkim/sign.ts';
import type { MessageEnvelope } from '../messages/views.ts';
import type { MessageRow } from '../store/messages.ts';

/** `messages.content` as accepted (src/messages/accept.ts). */
export interface MessageContent {
  html: string | null;
  text: string | null;
  headers: Record<string, string>;
  attachments: { filename: string; content: string; contentType: string }[];
}

/** What a per-recipient step may replace when it rebuilds the message for one recipient. */
export interface PartOverrides {
  html?: string | null;
  text?: string | null;
  /** Added after the common headers, e.g. List-Unsubscribe with the recipient's own token. */
  headers?: Record<string, string>;
}

/**
 * A message built once for all its recipients. `raw` is the MIME message every recipient gets
 * unless a render step needs something of its own; `compose` rebuilds it with per-recipient
 * parts (tracked links, an unsubscribe URL) from the same stored content.
 */
export interface PreparedMessage {
  message: Pick<MessageRow, 'id' | 'workspace_id' | 'domain' | 'stream' | 'message_id_header'>;
  content: MessageContent;
  raw: Buffer;
  compose(overrides: PartOverrides): Promise<Buffer>;
}

export interface RecipientRef {
  id: number;
  address: string;
}

/**
 * The per-recipient render step, run on the prepared message before signing. The default sends
 * the shared bytes; tracking and broadcast unsubscribe plug in here.
 */
export type RenderStep = (prepared: PreparedMessage, recipient: RecipientRef) => Promise<Buffer>;

export const sendAsPrepared: RenderStep = async (prepared) => prepared.raw;

export interface DkimKey {
  domain: string;
  selector: string;
  privateKeyPem: string;
}

/**
 * Gmail's feedback loop groups complaints by the fields of this header, right to left: sender
 * id, then mail type, then customer. Nothing unique per message goes in (Gmail ignores ids that
 * identify single messages), so a workspace's stream is the unit a complaint rate is shown for.
 */
export function feedbackId(message: Pick<MessageRow, 'workspace_id' | 'stream'>, senderId: string): string {
  return `${message.stream}:${message.workspace_id}:${senderId}`;
}

function build(options: ConstructorParameters<typeof MailComposer>[0]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    new MailComposer(options).compile().build((err, raw) => (err ? reject(err) : resolve(raw)));
  });
}

/**
 * Builds the MIME message of one stored message: the headers SPEC §4 owns (From, To, Cc,
 * Reply-To, Subject, Date, the stored Message-ID, Feedback-ID), the customer's own headers, and
 * the body parts. Bcc recipients are never named in the header.
 */
export async function prepareMessage(message: MessageRow, senderId: string): Promise<PreparedMessage> {
  if (message.content === null) throw new Error(`message ${message.id} has no content left (pruned)`);
  const content = JSON.parse(message.content) as MessageContent;
  const envelope = JSON.parse(message.envelope) as MessageEnvelope;
  const compose = (overrides: PartOverrides): Promise<Buffer> => {
    const html = overrides.html !== undefined ? overrides.html : content.html;
    const text = overrides.text !== undefined ? overrides.text : content.text;
    return build({
      from: message.from_header,
      to: envelope.to.length > 0 ? envelope.to : undefined,
      cc: envelope.cc.length > 0 ? envelope.cc : undefined,
      replyTo: envelope.reply_to.length > 0 ? envelope.reply_to : undefined,
      subject: message.subject,
      // The origination date (RFC 5322 §3.6.1): when the message was ready, the same on every retry.
      date: new Date(message.scheduled_at ?? message.created_at),
      messageId: message.message_id_header,
      ...(text !== null ? { text } : {}),
      ...(html !== null ? { html } : {}),
      attachments: content.attachments.map((a) => ({
        filename: a.filename,
        content: a.content,
        encoding: 'base64',
        contentType: a.contentType,
      })),
      headers: { ...content.headers, 'Feedback-ID': feedbackId(message, senderId), ...(overrides.headers ?? {}) },
      // Only the message headers; the envelope is ours (VERP) and set per transaction.
      disableFileAccess: true,
      disableUrlAccess: true,
    });
  };
  return { message, content, raw: await compose({}), compose };
}

/** The bytes for one recipient: rendered, then DKIM-signed (relaxed/relaxed) by the sending domain. */
export async function finishForRecipient(
  prepared: PreparedMessage,
  recipient: RecipientRef,
  render: RenderStep,
  key: DkimKey,
  now: number,
): Promise<Buffer> {
  const rendered = await render(prepared, recipient);
  return signMessage(rendered, { domain: key.domain, selector: key.selector, privateKeyPem: key.privateKeyPem, now });
}
