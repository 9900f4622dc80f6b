/**
 * What the MIME builder (nodemailer's MailComposer) is given for a message of one part or of a
 * text and an HTML alternative: the same object, so the two cannot drift apart. An option not
 * named here sends the message to nodemailer.
 */
export interface HeadOptions {
  from?: unknown;
  to?: unknown;
  cc?: unknown;
  replyTo?: unknown;
  subject?: unknown;
  date?: unknown;
  messageId?: unknown;
  headers?: unknown;
  text?: unknown;
  html?: unknown;
  attachments?: unknown;
}

/** Options that change nothing in the head. */
const INERT = new Set(['disableFileAccess', 'disableUrlAccess']);
const KNOWN = new Set(['from', 'to', 'cc', 'replyTo', 'subject', 'date', 'messageId', 'headers', 'text', 'html', 'attachments', ...INERT]);

/** Longest header line nodemailer leaves unfolded: a line of 76 characters is folded already. */
const LINE = 75;
const LOCAL_PART = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*";
const DOMAIN = '[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+';
const BARE = new RegExp(`^${LOCAL_PART}@${DOMAIN}$`);
const NAMED = new RegExp(`^[A-Za-z0-9]+(?: +[A-Za-z0-9]+)* <${LOCAL_PART}@${DOMAIN}>$`);
// Printable ASCII but the double quote, which nodemailer encodes (RFC 2047) wherever it stands.
const PLAIN_TEXT = /^[\x21\x23-\x7e](?:[\x20\x21\x23-\x7e]*[\x21\x23-\x7e])?$/;
const MESSAGE_ID = /^<[\x21-\x3b\x3d\x3f-\x7e]+>$/;

function plainMailbox(mailbox: string): boolean {
  return BARE.test(mailbox) || NAMED.test(mailbox);
}

/** `Name: value` as it stands, or null where it would need folding or encoding. */
function field(name: string, value: string, test: (value: string) => boolean): string | null {
  const line = `${name}: ${value}`;
  return line.length <= LINE && test(value) ? `${line}\r\n` : null;
}

function mailboxes(name: string, list: unknown): string | null {
  if (list === undefined) return '';
  if (!Array.isArray(list) || list.length === 0 || !list.every((m) => typeof m === 'string' && plainMailbox(m))) return null;
  return field(name, list.join(', '), () => true);
}

const isString = (v: unknown): v is string => typeof v === 'string';

/**
 * The header fields of a message whose fields need neither encoding nor folding (plain ASCII names
 * of letters and digits, short lines, Feedback-ID the only header field given), up to its
 * Content-Type: the bytes nodemailer's MIME builder writes for the same options, in its order
 * (test/delivery/plain-head.test.ts holds the two equal), without building its tree, which costs
 * more than the rest of the message's preparation. Null otherwise: the caller then asks nodemailer.
 */
function plainFields(o: HeadOptions): string | null {
  if (!Object.keys(o).every((key) => KNOWN.has(key))) return null;
  if (!(Array.isArray(o.attachments) ? o.attachments.length === 0 : o.attachments === undefined)) return null;
  const headers = o.headers as Record<string, unknown> | undefined;
  const feedbackId = headers?.['Feedback-ID'];
  if (Object.keys(headers ?? {}).length !== 1 || !isString(feedbackId)) return null;
  if (!isString(o.from) || !isString(o.subject) || !isString(o.messageId) || !MESSAGE_ID.test(o.messageId)) return null;
  if (!(o.date instanceof Date) || Number.isNaN(o.date.getTime())) return null;
  const parts = [
    field('Feedback-ID', feedbackId, (v) => PLAIN_TEXT.test(v)),
    field('From', o.from, plainMailbox),
    mailboxes('To', o.to),
    mailboxes('Cc', o.cc),
    mailboxes('Reply-To', o.replyTo),
    field('Subject', o.subject, (v) => PLAIN_TEXT.test(v) && !v.includes('=?')),
    field('Message-ID', o.messageId, () => true),
  ];
  if (parts.some((p) => p === null)) return null;
  const date = o.date.toUTCString().replace(/GMT/, '+0000');
  return `${parts.join('')}Date: ${date}\r\nMIME-Version: 1.0\r\n`;
}

/**
 * The header block (its last CRLF included, no Content-Transfer-Encoding) of a one-part message
 * whose fields are plain (`plainFields`), or null.
 */
export function plainHead(o: HeadOptions): string | null {
  if ((o.text === undefined) === (o.html === undefined)) return null;
  const fields = plainFields(o);
  if (fields === null) return null;
  return `${fields}Content-Type: ${o.html === undefined ? 'text/plain' : 'text/html'}; charset=utf-8\r\n`;
}

/** A text and an HTML alternative of one message: its header block and the lines around the parts. */
export interface AlternativeFrame {
  head: string;
  /** Before the text part, between it and the HTML part, after the HTML part. */
  open: string;
  between: string;
  close: string;
}

/**
 * The frame of a `multipart/alternative` message of a text and an HTML part whose fields are plain
 * (`plainFields`), in nodemailer's bytes for its boundary made of `base` (16 hex digits, its own
 * `baseBoundary`); each part goes in whole, its own header fields first. Null otherwise.
 */
export function plainAlternative(o: HeadOptions, base: string): AlternativeFrame | null {
  if (o.text === undefined || o.html === undefined || !/^[0-9a-f]{16}$/.test(base)) return null;
  const fields = plainFields(o);
  if (fields === null) return null;
  const boundary = `--_NmP-${base}-Part_1`;
  return {
    head: `${fields}Content-Type: multipart/alternative;\r\n boundary="${boundary}"\r\n`,
    open: `--${boundary}\r\n`,
    between: `\r\n--${boundary}\r\n`,
    close: `\r\n--${boundary}--\r\n`,
  };
}
