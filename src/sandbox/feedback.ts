import { randomBytes } from 'node:crypto';
import { parseReport } from '../bounces/index.ts';
import { handleReport, type HandledReport, type InboundDeps } from '../inbound/process.ts';
import { checkRecipient } from '../inbound/policy.ts';
import type { TokenCodec } from '../tokens/index.ts';
import { SANDBOX_HOST, type Feedback } from './outcomes.ts';

export interface FeedbackDeps extends InboundDeps {
  unsubscribe: TokenCodec;
}

/** One delivered copy the simulated receiver reacts to. */
export interface DeliveredCopy {
  recipientId: number;
  /** Our VERP envelope sender, `b+<token>@<return-path domain>`. */
  mailFrom: string;
  rcptTo: string;
  raw: Buffer;
  at: number;
}

const CRLF = '\r\n';

function headerSection(raw: Buffer): string {
  const text = raw.toString('utf8');
  const end = text.indexOf('\r\n\r\n');
  return end === -1 ? text : text.slice(0, end);
}

function envelopeHeaders(from: string, to: string, subject: string, at: number): string[] {
  return [
    `From: <${from}>`,
    `To: <${to}>`,
    `Subject: ${subject}`,
    `Date: ${new Date(at).toUTCString()}`,
    `Message-ID: <${randomBytes(12).toString('hex')}@${SANDBOX_HOST}>`,
    'MIME-Version: 1.0',
  ];
}

/**
 * An RFC 5965 abuse report as a mailbox provider's feedback loop sends it to our fbl@ address:
 * the quoted original starts with the Return-Path the receiving MTA added, which carries our
 * VERP token (the proof that names the recipient).
 */
export function complaintReport(copy: DeliveredCopy, fbl: string): Buffer {
  const boundary = `sandbox-${randomBytes(8).toString('hex')}`;
  const lines = [
    ...envelopeHeaders(`feedback@${SANDBOX_HOST}`, fbl, 'Abuse report', copy.at),
    `Content-Type: multipart/report; report-type=feedback-report; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=us-ascii',
    '',
    `${copy.rcptTo} marked this message as spam (simulated by the mailsvc sandbox).`,
    '',
    `--${boundary}`,
    'Content-Type: message/feedback-report',
    '',
    'Feedback-Type: abuse',
    'User-Agent: mailsvc-sandbox/1',
    'Version: 1',
    `Original-Mail-From: <${copy.mailFrom}>`,
    `Original-Rcpt-To: <${copy.rcptTo}>`,
    `Arrival-Date: ${new Date(copy.at).toUTCString()}`,
    `Reporting-MTA: dns; ${SANDBOX_HOST}`,
    'Source-IP: 127.0.0.1',
    '',
    `--${boundary}`,
    'Content-Type: text/rfc822-headers',
    '',
    `Return-Path: <${copy.mailFrom}>`,
    headerSection(copy.raw),
    '',
    `--${boundary}--`,
    '',
  ];
  return Buffer.from(lines.join(CRLF));
}

/** What a mail client sends for the `mailto:` of List-Unsubscribe (RFC 2369). */
export function unsubscribeMail(copy: DeliveredCopy, to: string): Buffer {
  return Buffer.from([...envelopeHeaders(copy.rcptTo, to, 'unsubscribe', copy.at), 'Content-Type: text/plain; charset=us-ascii', '', 'unsubscribe', ''].join(CRLF));
}

/**
 * The receiver's later reaction to a delivered copy, mailed to our inbound addresses at the
 * copy's return-path domain and handled by the same pipeline as reports from the internet:
 * the same proof, the same events, the same suppression.
 */
export async function sendFeedback(deps: FeedbackDeps, kind: Feedback, copy: DeliveredCopy): Promise<HandledReport> {
  const rpd = copy.mailFrom.slice(copy.mailFrom.lastIndexOf('@') + 1);
  const address = kind === 'complaint' ? `fbl@${rpd}` : `u+${deps.unsubscribe.signId(copy.recipientId)}@${rpd}`;
  const policy = { returnPathDomains: new Set([rpd]), verp: deps.verp, unsubscribe: deps.unsubscribe, maxRecipients: 1 };
  const decision = checkRecipient({ accepted: 0 }, address, policy);
  if (!decision.ok) throw new Error(`the inbound listener would refuse ${address}: ${decision.reason}`);
  const raw = kind === 'complaint' ? complaintReport(copy, address) : unsubscribeMail(copy, address);
  return handleReport(deps, {
    target: decision.value,
    mailFrom: kind === 'complaint' ? `feedback@${SANDBOX_HOST}` : copy.rcptTo,
    remoteIp: '127.0.0.1',
    helo: SANDBOX_HOST,
    raw,
    size: raw.length,
    // Our own few-kilobyte report: parsed here, without the worker pool strangers' reports need.
    parse: { parsed: await parseReport(raw), unparsed: null },
  });
}
