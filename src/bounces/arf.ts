// RFC 5965 feedback reports (ARF) and the older Hotmail-style complaint mails that carry only
// the complained-about message.

import { cleanAddress } from './codes.ts';
import { header, parseHeaders, splitHeadBody, type Header } from './mime.ts';
import { stripType } from './dsn.ts';

export interface FeedbackReport {
  feedbackType: string;
  userAgent: string | null;
  sourceIp: string | null;
  reportingMta: string | null;
  recipients: string[];
}

/**
 * Recipients, in the order a report names them: Original-Rcpt-To (one per complained-about
 * recipient, RFC 5965 §3.2), else Removal-Recipient (the pre-ARF draft), else the To: of the
 * quoted original message.
 */
function complainedRecipients(fields: Header[], original: Header[] | null): string[] {
  const pick = (name: string) =>
    fields
      .filter((f) => f.name === name)
      .map((f) => cleanAddress(f.value))
      .filter((a): a is string => a !== null);
  let out = pick('original-rcpt-to');
  if (out.length === 0) out = pick('removal-recipient');
  if (out.length === 0 && original) {
    // Hotmail's complaint mails name the complaining mailbox in their own header.
    const hm = cleanAddress(header(original, 'x-hmxmroriginalrecipient'));
    const to = hm ?? cleanAddress(header(original, 'to'));
    if (to) out = [to];
  }
  return [...new Set(out)];
}

export function parseFeedbackReport(body: string, original: Header[] | null): FeedbackReport {
  const fields = parseHeaders(body.replace(/\n[ \t]*\n/g, '\n'));
  return {
    feedbackType: (header(fields, 'feedback-type') ?? 'other').toLowerCase().trim(),
    userAgent: header(fields, 'user-agent'),
    sourceIp: header(fields, 'source-ip'),
    reportingMta: stripType(header(fields, 'reporting-mta')),
    recipients: complainedRecipients(fields, original),
  };
}

/** Hotmail/Outlook.com complaint: "From: staff@hotmail.com", "Subject: complaint about message from 192.0.2.222". */
export function isHotmailStyleComplaint(top: Header[]): boolean {
  const subject = header(top, 'subject') ?? '';
  return /complaint about message from/i.test(subject);
}

export function headersOf(messageText: string): Header[] {
  return parseHeaders(splitHeadBody(messageText).head);
}
