// The one classifier for SMTP replies, used for synchronous replies during delivery and for the
// diagnostics found in reports. The enhanced status code is read first (its class, and for the
// codes that say one precise thing, the reason), the reply code second, the text last.

import { findFailureEnhanced, findReplyCode, fold, statusClass } from './codes.ts';
import { REASONS, REPLY_RULES, STATUS_RULES, TEXT_RULES, type Reason } from './rules.ts';
import type { ReplyClassification, ReplyInput } from './types.ts';

export interface ClassifyInput extends ReplyInput {
  /** The SMTP command the reply answered ("RCPT", "DATA", ...), when the report says it. */
  command?: string | null;
  /** DSN Action; "delayed" makes an otherwise classless failure transient (RFC 3464 §2.3.3). */
  action?: string | null;
}

/** "5.1.1 (user unknown)" → "5.1.1"; anything that is not a status code → null. */
export function normaliseStatus(value: string | null | undefined): string | null {
  const m = value ? /^\s*([245])\.(\d{1,3})\.(\d{1,3})/.exec(value) : null;
  return m ? `${m[1]}.${Number(m[2])}.${Number(m[3])}` : null;
}

function statusRule(status: string | null) {
  if (!status) return undefined;
  return STATUS_RULES[`X${status.slice(1)}`];
}

export function reasonFromText(text: string): Reason | null {
  for (const rule of TEXT_RULES) if (rule.pattern.test(text)) return rule.reason;
  return null;
}

/** Only a failed RCPT says the address is unknown; "user unknown" after DATA is a content filter hiding behind it. */
function adjustForCommand(reason: Reason, command: string | null | undefined): Reason {
  if (command === 'DATA' && reason === 'user_unknown') return 'content_filtered';
  return reason;
}

export function classify(input: ClassifyInput): ReplyClassification {
  const text = fold(input.text ?? '');
  const given = normaliseStatus(input.status);
  const inText = normaliseStatus(findFailureEnhanced(text));
  // A generic "X.0.0" in a Status field says less than the precise code the remote host wrote.
  const precise = given && /^.\.0\.0$/.test(given) && inText && inText[0] === given[0] ? inText : given;
  const code = input.smtpCode ?? findReplyCode(text);
  const cls =
    statusClass(precise ?? inText) ??
    (code ? (String(code)[0] as '4' | '5') : null) ??
    (input.action === 'delayed' ? '4' : '5');
  const status = precise ?? inText ?? `${cls}.0.0`;

  const byStatus = statusRule(status);
  let reason: Reason =
    (byStatus?.decisive ? byStatus.reason : null) ??
    reasonFromText(text) ??
    byStatus?.reason ??
    (code ? REPLY_RULES[code] : undefined) ??
    (input.action === 'delayed' ? 'expired' : cls === '4' ? 'temporary_failure' : 'undefined');
  reason = adjustForCommand(reason, input.command);

  const bounceType = cls === '4' ? 'transient' : REASONS[reason];
  return { bounceType, reason, status };
}

/** Public entry point: classify one SMTP reply (code, enhanced status, text). */
export function classifyReply(input: ReplyInput): ReplyClassification {
  return classify({ smtpCode: input.smtpCode, status: input.status, text: input.text });
}

/** Which SMTP command a diagnostic says it answered: Postfix "(in reply to end of DATA command)", Exim "after RCPT TO:", Sendmail ">>> DATA". */
export function commandFromText(text: string): string | null {
  const m =
    /in reply to (?:end of )?(DATA|RCPT TO|MAIL FROM|HELO|EHLO|RCPT|MAIL)\b/i.exec(text) ??
    /after (?:end of )?(DATA|RCPT TO|MAIL FROM|HELO|EHLO|RCPT|MAIL)\b/i.exec(text) ??
    /^>>> (DATA|RCPT TO|MAIL FROM|HELO|EHLO)\b/im.exec(text);
  if (!m) return null;
  const c = m[1]!.toUpperCase();
  return c.startsWith('RCPT') ? 'RCPT' : c.startsWith('MAIL') ? 'MAIL' : c;
}
