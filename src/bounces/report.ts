// parseReport: a whole inbound message → what it reports. The order of the checks matters:
// a feedback report or an RFC 3464 part is decisive; only a message that is neither is read as
// an auto-reply, and only then as a free-text failure notice.

import { parseFeedbackReport, headersOf, isHotmailStyleComplaint } from './arf.ts';
import { isAutoReply } from './autoreply.ts';
import { ALL_TEXT_RULES, classify, commandFromText, reasonFromText, type TextRuleSet } from './classify.ts';
import { cleanAddress, findFailureEnhanced, findReplyCode, fold } from './codes.ts';
import { parseDeliveryStatus, type DsnRecipient } from './dsn.ts';
import { decodeCharset, header, leaves, parseHeaders, parseMime, toLatin1Lf, type Header, type MimePart } from './mime.ts';
import { parseNotice, noticeText, unquote } from './notice.ts';
import { parseSesNotification } from './ses.ts';
import { Parser } from 'htmlparser2';
import { REPORT_LIMITS } from './limits.ts';
import { looksLikeFailureNotice, noticeAction } from './signals.ts';
import type { ParsedReport, ReportRecipient } from './types.ts';

const HUMAN_TEXT_LIMIT = 8 * 1024;
const DIAGNOSTIC_LIMIT = 1000;
const NOT_FAILED = new Set(['delivered', 'relayed', 'expanded']);

/** A report with nothing found in it: what an unparseable (or unparsed) message reads as. */
export function emptyReport(kind: ParsedReport['kind'] = 'unknown'): ParsedReport {
  return {
    kind,
    recipients: [],
    feedbackType: null,
    originalMessageId: null,
    originalReturnPath: null,
    reportingMta: null,
    humanText: '',
    userAgent: null,
    sourceIp: null,
  };
}

/**
 * The text of an HTML part, tags replaced by spaces. htmlparser2's tokenizer reads each character
 * once, where a pattern such as /<[^>]*>/g scans to the end from every unclosed "<".
 */
export function htmlToText(html: string): string {
  const out: string[] = [];
  let length = 0;
  const parser = new Parser(
    {
      ontext(text) {
        if (length >= REPORT_LIMITS.humanText) return;
        out.push(text);
        length += text.length;
      },
      onopentag: () => void out.push(' '),
      onclosetag: () => void out.push(' '),
    },
    { decodeEntities: true },
  );
  // Markup is verbose: read up to four times the text we keep.
  parser.end(html.slice(0, REPORT_LIMITS.humanText * 4));
  return out
    .join('')
    .replace(/\u00a0/g, ' ')
    .slice(0, REPORT_LIMITS.humanText);
}

function partText(part: MimePart): string {
  const text = decodeCharset(part.body.slice(0, REPORT_LIMITS.humanText * 4), part.params.charset);
  return part.contentType === 'text/html' ? htmlToText(text) : text.slice(0, REPORT_LIMITS.humanText);
}

function humanPart(parts: MimePart[]): MimePart | null {
  const text = parts.filter((p) => p.contentType.startsWith('text/') && p.contentType !== 'text/rfc822-headers' && /\S/.test(p.body));
  return text.find((p) => p.contentType === 'text/plain') ?? text[0] ?? null;
}

const MESSAGE_ID = /^Message-I[Dd][ \t]*:[ \t]*(?:\n[ \t]+)?(<[^<>\s]+>)/im;

/** The Message-ID of our original message: from the quoted part, else from a quoted header block. */
function originalMessageId(parts: MimePart[], root: MimePart): { id: string | null; headers: Header[] | null } {
  const quoted = parts.find((p) => p.contentType === 'message/rfc822' || p.contentType === 'text/rfc822-headers');
  if (quoted) {
    const headers = headersOf(quoted.body.trimStart());
    const id = header(headers, 'message-id');
    const m = id ? /<[^<>\s]+>/.exec(id) : null;
    if (m) return { id: m[0], headers };
    const inBody = MESSAGE_ID.exec(quoted.body);
    return { id: inBody ? inBody[1]! : null, headers };
  }
  // One-part notices quote the original after their text: the first Message-ID after the
  // notice itself is the original's (the report's own Message-ID is in the top header block).
  const body = parts.map((p) => p.body).join('\n');
  const rest = body.slice(noticeText(body).length);
  const m = MESSAGE_ID.exec(rest) ?? (root.parts.length > 0 ? MESSAGE_ID.exec(body) : null);
  const block = /^[A-Za-z][\w-]*:[ \t]/m.exec(rest);
  const headers = block ? parseHeaders(rest.slice(block.index).split(/\n[ \t]*\n/)[0]!) : null;
  return { id: m ? m[1]! : null, headers };
}

// Amazon SES rewrites the remote reply behind its own summary:
// "5.1.0 - Unknown address error 550-'5.7.1 <x@y>... Access denied' (delivery attempts: 0)".
// The remote host's words are what classify; SES's code stands only when the reply has none.
const SES_DIAGNOSTIC = /^([245]\.\d{1,3}\.\d{1,3}) - [^']*?(\d{3})-'([\s\S]*)'\s*\(delivery attempts: \d+\)/;

function recipient(
  rules: TextRuleSet,
  address: string,
  action: string,
  diagnostic: string,
  status: string | null,
  remoteMta: string | null,
  context: string,
  diagnosticType: string | null = null,
  response = diagnostic,
): ReportRecipient {
  let text = fold(diagnostic).slice(0, DIAGNOSTIC_LIMIT);
  const ses = SES_DIAGNOSTIC.exec(text);
  if (ses) {
    text = `${ses[2]} ${ses[3]}`;
    status = findFailureEnhanced(ses[3]) ?? ses[1]!;
  }
  const command = commandFromText(context);
  const c = classify({ status, text, action, command, diagnosticType }, rules);
  const delayed = action === 'delayed';
  return {
    address,
    originalRecipient: null,
    action,
    status: delayed && c.status[0] === '5' ? `4${c.status.slice(1)}` : c.status,
    smtpCode: findReplyCode(text),
    bounceType: delayed ? 'transient' : c.bounceType,
    reason: delayed && c.bounceType !== 'transient' ? 'expired' : c.reason,
    diagnostic: text,
    response: response.trim(),
    remoteMta,
    explanation: c.explanation,
  };
}

function fromDsn(rules: TextRuleSet, list: DsnRecipient[], notice: string): ReportRecipient[] {
  const out: ReportRecipient[] = [];
  const blocks = parseNotice(
    notice,
    list.map((r) => r.address).filter((a): a is string => a !== null),
    new Set(),
  );
  // First block per address, looked up once per recipient (a scan per recipient is quadratic).
  const blockOf = new Map<string, string>();
  for (const b of blocks) if (!blockOf.has(b.address.toLowerCase())) blockOf.set(b.address.toLowerCase(), b.block);
  for (const r of list) {
    if (!r.address) continue;
    const action = r.action || 'failed';
    if (NOT_FAILED.has(action) || r.status?.startsWith('2')) continue;
    const block = blockOf.get(r.address.toLowerCase()) ?? '';
    // Gmail and Microsoft 365 leave the Diagnostic-Code thin and write the reply in the text.
    const diagnostic = /[A-Za-z]{4,}/.test(r.diagnostic) ? r.diagnostic : block || r.diagnostic;
    // A notice about one recipient is all about it: its transcript names the failing command,
    // and a full disk the reporting MTA states itself ("Your message to <nekochan> was
    // automatically rejected: Not enough disk space") outweighs the remote's generic code.
    const context = list.length === 1 ? `${r.diagnostic}\n${block}\n${notice}` : `${r.diagnostic}\n${block}`;
    const own = list.length === 1 ? reasonFromText(fold(noticeText(notice)), rules) : null;
    const text = own === 'mailbox_full' || own === 'system_full' ? `${fold(noticeText(notice))} ${diagnostic}` : diagnostic;
    // The classifier may read the notice's own words too; the response stays the report's.
    const entry = recipient(rules, r.address, action, text, r.status, r.remoteMta, context, r.diagnosticType, diagnostic);
    if (r.originalRecipient && r.originalRecipient.toLowerCase() !== r.address.toLowerCase()) entry.originalRecipient = r.originalRecipient;
    out.push(entry);
  }
  return out;
}

function addressesOf(value: string | null): string[] {
  if (!value) return [];
  return value
    .split(/[,;]/)
    .map((v) => cleanAddress(v))
    .filter((a): a is string => a !== null);
}

function complaint(report: ParsedReport, feedbackType: string, addresses: string[]): ParsedReport {
  // abuse, fraud, virus, other → complaint; opt-out → unsubscribe; the rest stored only.
  const reason = feedbackType === 'opt-out' ? 'unsubscribe' : feedbackType === 'auth-failure' ? 'auth_failure' : feedbackType === 'not-spam' ? 'not_spam' : 'complaint';
  return {
    ...report,
    kind: 'complaint',
    feedbackType,
    recipients: addresses
      .map((a) => cleanAddress(a))
      .filter((a): a is string => a !== null)
      .map((address) => ({
        address,
        originalRecipient: null,
        action: 'failed',
        status: '',
        smtpCode: null,
        bounceType: 'blocked',
        reason,
        diagnostic: '',
        response: '',
        remoteMta: null,
      })),
  };
}

function parse(raw: Buffer, rules: TextRuleSet, depth = 0): ParsedReport {
  const root = parseMime(toLatin1Lf(raw));
  const top = root.headers;
  const parts = leaves(root);
  const human = humanPart(parts);
  const text = human ? partText(human) : '';
  const report = emptyReport();
  report.humanText = text.slice(0, HUMAN_TEXT_LIMIT);
  const original = originalMessageId(parts, root);
  report.originalMessageId = original.id;
  report.originalReturnPath = cleanAddress(header(original.headers ?? [], 'return-path'));

  const feedback = parts.find((p) => p.contentType === 'message/feedback-report');
  if (feedback || isHotmailStyleComplaint(top)) {
    const arf = feedback ? parseFeedbackReport(feedback.body, original.headers) : parseFeedbackReport('Feedback-Type: abuse', original.headers);
    return complaint({ ...report, reportingMta: arf.reportingMta, userAgent: arf.userAgent, sourceIp: arf.sourceIp }, arf.feedbackType, arf.recipients);
  }

  const ses = parseSesNotification(text);
  if (ses?.type === 'complaint')
    return complaint(
      report,
      ses.feedbackType ?? 'abuse',
      ses.recipients.map((r) => r.address),
    );
  if (ses) {
    const list = ses.recipients.filter((r) => cleanAddress(r.address));
    return {
      ...report,
      kind: 'bounce',
      reportingMta: ses.reportingMta,
      recipients: list
        .filter((r) => !NOT_FAILED.has(r.action ?? 'failed'))
        .map((r) => recipient(rules, cleanAddress(r.address)!, r.action ?? 'failed', r.diagnostic, r.status, ses.reportingMta, r.diagnostic)),
    };
  }

  const dsnParts = parts.filter((p) => p.contentType === 'message/delivery-status' || p.contentType === 'message/global-delivery-status');
  if (dsnParts.length > 0) {
    const dsn = dsnParts.map((p) => parseDeliveryStatus(p.body));
    const list = dsn.flatMap((d) => d.recipients);
    if (list.some((r) => r.address)) {
      report.reportingMta = dsn.find((d) => d.reportingMta)?.reportingMta ?? null;
      return { ...report, kind: 'bounce', recipients: fromDsn(rules, list, text) };
    }
  }

  // A notice that wraps the real RFC 3464 report as an attached message (Trend Micro, X5).
  if (depth === 0) {
    const inner = parts.find((p) => p.contentType === 'message/rfc822' && /message\/delivery-status/i.test(p.body));
    if (inner) {
      const nested = parse(Buffer.from(inner.body, 'latin1'), rules, 1);
      if (nested.kind === 'bounce' && nested.recipients.length > 0) return { ...nested, humanText: report.humanText || nested.humanText };
    }
  }

  const notice = looksLikeFailureNotice(top, text);
  if (!notice && isAutoReply(top)) return { ...report, kind: 'autoreply' };
  if (!notice && !header(top, 'x-failed-recipients')) return report;

  // Some MTAs paste the RFC 3464 fields into the text instead of a separate part.
  const inline = /^(?:Final|Original)-Recipient:/im.exec(text);
  if (inline) {
    const dsn = parseDeliveryStatus(text.slice(inline.index));
    if (dsn.recipients.some((r) => r.address)) {
      report.reportingMta = dsn.reportingMta;
      return { ...report, kind: 'bounce', recipients: fromDsn(rules, dsn.recipients, text.slice(0, inline.index)) };
    }
  }

  const exclude = new Set([...addressesOf(header(top, 'from')), ...addressesOf(header(top, 'to'))].map((a) => a.toLowerCase()));
  const listed = addressesOf(header(top, 'x-failed-recipients'));
  const action = noticeAction(top, text);
  const entries = parseNotice(unquote(text), listed, exclude);
  if (entries.length === 0 && notice) {
    // A notice that names nobody ("--- Delivery report unavailable ---", a bare transcript):
    // the recipient is the To: of the message it returns.
    const to = cleanAddress(header(original.headers ?? [], 'to'));
    if (to && !exclude.has(to.toLowerCase())) entries.push({ address: to, block: noticeText(unquote(text)) });
  }
  if (entries.length === 0) return notice ? { ...report, kind: 'bounce' } : report;
  // A notice about one recipient is all about it: its transcript may name the failing command
  // outside the recipient's block ("-------SMTP command DATA").
  const whole = entries.length === 1 ? noticeText(unquote(text)) : null;
  const recipients = entries.map((e) => recipient(rules, e.address, action, e.block, null, null, whole ?? e.block));
  return { ...report, kind: 'bounce', recipients };
}

/**
 * Parses a report; never throws, whatever the bytes (garbage → kind "unknown"). `rules` are
 * the classifier's text rules: all of them, except when measuring (`withheldRules`).
 */
export async function parseReport(raw: Buffer, rules: TextRuleSet = ALL_TEXT_RULES): Promise<ParsedReport> {
  return parseReportSync(raw, rules);
}

export function parseReportSync(raw: Buffer, rules: TextRuleSet = ALL_TEXT_RULES): ParsedReport {
  try {
    const messages = splitMbox(raw);
    if (!messages) return parse(raw, rules);
    // A saved mailbox holding several reports: the failed recipients of all its bounces, the
    // rest (Message-ID, reporting MTA, text) from the first bounce.
    const reports = messages.map((m) => parse(m, rules));
    const bounces = reports.filter((r) => r.kind === 'bounce');
    if (bounces.length < 2) return bounces[0] ?? reports[0]!;
    return { ...bounces[0]!, recipients: bounces.flatMap((r) => r.recipients) };
  } catch {
    return emptyReport();
  }
}

// mbox (`mailsvc bounce parse` on a saved mailbox): every message starts with a postmark line
// "From MAILER-DAEMON  Thu Jul  2 12:05:05 2020" followed by a header. Body lines that begin
// with "From " are escaped (">From ") in an mbox; a postmark must also carry the date and be
// followed by a header line. An SMTP transaction never starts with a postmark, so the reports
// the listener receives are never split.
const POSTMARK = /^From \S+ +[A-Z][a-z]{2} [A-Z][a-z]{2} +\d{1,2} \d\d:\d\d(?::\d\d)? .*$/;
const NEXT_POSTMARK = /\n(?=From \S+ +[A-Z][a-z]{2} [A-Z][a-z]{2} +\d{1,2} \d\d:\d\d(?::\d\d)? [^\n]*\r?\n[\w-]+:)/g;

function splitMbox(raw: Buffer): Buffer[] | null {
  const head = raw.subarray(0, 200).toString('latin1');
  if (!POSTMARK.test(head.split('\n')[0]!.trimEnd())) return null;
  const text = raw.toString('latin1');
  const starts = [0, ...[...text.matchAll(NEXT_POSTMARK)].map((m) => m.index! + m[0].length)];
  if (starts.length < 2) return null;
  return starts.map((start, i) => Buffer.from(text.slice(start, starts[i + 1] ?? text.length), 'latin1'));
}
