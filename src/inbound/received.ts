import type { AddressObject, HeaderLines } from 'mailparser';
import { mailparser } from '../messages/mailparser.ts';

/**
 * A received message read for an application (SPEC §14): the fields of the `email.received`
 * payload, attachments with their bytes. Runs in a parser worker (parse-worker.ts) under the
 * pool's time budget: mailparser decodes every part, which a hostile message can make slow.
 */

export interface MailAddress {
  name: string;
  address: string;
}

export interface ReceivedAttachment {
  filename: string | null;
  content_type: string;
  size: number;
  content_id: string | null;
  content: Uint8Array;
}

export interface ReceivedMail {
  from: MailAddress | null;
  to: MailAddress[];
  cc: MailAddress[];
  reply_to: MailAddress[];
  subject: string | null;
  message_id: string | null;
  in_reply_to: string | null;
  references: string[];
  date: string | null;
  text: string | null;
  html: string | null;
  headers: [string, string][];
  attachments: ReceivedAttachment[];
}

/** A parser worker's answer for a message mailparser threw on. */
export const UNREADABLE = 'unreadable';

// Caps on what one message may make us build, beyond inbound.maxSize: a header block of a
// million one-byte lines, or ten thousand empty parts, is refused work, not a payload.
const MAX_HEADERS = 1000;
const MAX_ADDRESSES = 1000;

const addresses = (field: AddressObject | AddressObject[] | undefined): MailAddress[] => {
  const out: MailAddress[] = [];
  for (const group of field === undefined ? [] : Array.isArray(field) ? field : [field]) {
    for (const a of group.value) {
      // A group (RFC 5322 §3.4 `undisclosed-recipients:;`) holds its members in `group`.
      for (const member of a.group ?? [a]) {
        if (out.length >= MAX_ADDRESSES) return out;
        if (member.address) out.push({ name: member.name ?? '', address: member.address });
      }
    }
  }
  return out;
};

/** Each header field as written, in order: its name, and its value unfolded (RFC 5322 §2.2.3). */
function headerPairs(lines: HeaderLines): [string, string][] {
  const out: [string, string][] = [];
  for (const { line } of lines.slice(0, MAX_HEADERS)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    out.push([
      line.slice(0, colon).trim(),
      line
        .slice(colon + 1)
        .replace(/\r?\n(?=[ \t])/g, '')
        .trim(),
    ]);
  }
  return out;
}

const referencesOf = (r: string | string[] | undefined): string[] => (r === undefined ? [] : Array.isArray(r) ? r : [r]);

export async function parseReceivedMail(raw: Buffer): Promise<ReceivedMail> {
  const mail = await mailparser().simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true, skipTextLinks: true });
  const date = mail.date && !Number.isNaN(mail.date.getTime()) ? mail.date.toISOString() : null;
  return {
    from: addresses(mail.from)[0] ?? null,
    to: addresses(mail.to),
    cc: addresses(mail.cc),
    reply_to: addresses(mail.replyTo),
    subject: mail.subject ?? null,
    message_id: mail.messageId ?? null,
    in_reply_to: mail.inReplyTo ?? null,
    references: referencesOf(mail.references),
    date,
    text: mail.text ?? null,
    html: typeof mail.html === 'string' ? mail.html : null,
    headers: headerPairs(mail.headerLines),
    attachments: mail.attachments.map((a) => ({
      filename: a.filename ?? null,
      content_type: a.contentType,
      size: a.content.length,
      content_id: a.cid ?? null,
      content: new Uint8Array(a.content.buffer, a.content.byteOffset, a.content.byteLength),
    })),
  };
}
