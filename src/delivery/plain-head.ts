/** The fields of a one-part message given as fields, as the MIME builder is given them. */
export interface HeadFields {
  from: string;
  to: string[];
  cc: string[];
  replyTo: string[];
  subject: string;
  date: Date;
  messageId: string;
  feedbackId: string;
  /** The customer's own header fields. */
  headers: Record<string, string>;
  contentType: 'text/plain' | 'text/html';
}

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

function mailboxes(name: string, list: string[]): string | null {
  if (list.length === 0) return '';
  if (!list.every(plainMailbox)) return null;
  return field(name, list.join(', '), () => true);
}

/**
 * The header block (its last CRLF included, no Content-Transfer-Encoding) of a one-part message
 * whose fields need neither encoding nor folding: plain ASCII names of letters and digits, short
 * lines, none of the customer's own fields. These are the bytes nodemailer's MIME builder writes
 * for them, in its order (test/delivery/plain-head.test.ts holds the two equal), without building
 * its tree, which costs more than the rest of the message's preparation. Null otherwise: the
 * caller then asks nodemailer.
 */
export function plainHead(f: HeadFields): string | null {
  if (Object.keys(f.headers).length > 0 || !MESSAGE_ID.test(f.messageId) || Number.isNaN(f.date.getTime())) return null;
  const parts = [
    field('Feedback-ID', f.feedbackId, (v) => PLAIN_TEXT.test(v)),
    field('From', f.from, plainMailbox),
    mailboxes('To', f.to),
    mailboxes('Cc', f.cc),
    mailboxes('Reply-To', f.replyTo),
    field('Subject', f.subject, (v) => PLAIN_TEXT.test(v) && !v.includes('=?')),
    field('Message-ID', f.messageId, () => true),
  ];
  if (parts.some((p) => p === null)) return null;
  const date = f.date.toUTCString().replace(/GMT/, '+0000');
  return `${parts.join('')}Date: ${date}\r\nMIME-Version: 1.0\r\nContent-Type: ${f.contentType}; charset=utf-8\r\n`;
}
