// The one classifier for SMTP replies, used for synchronous replies during delivery and for the
// diagnostics found in reports. The enhanced status code is read first (its class, and for the
// codes that say one precise thing, the reason), the reply code second, the text last.

import { findFailureEnhanced, findReplyCode, fold, statusClass } from './codes.ts';
import { REASONS, REPLY_RULES, STATUS_RULES, TEXT_RULES, type Reason, type TextRule } from './rules.ts';
import type { ReplyClassification, ReplyInput } from './types.ts';

export interface ClassifyInput extends ReplyInput {
  /** DSN Diagnostic-Code type: "smtp", "x-unix" (a local delivery program), "x-postfix", ... */
  diagnosticType?: string | null;
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

let textRules: readonly TextRule[] = TEXT_RULES;

/**
 * Replaces the text rules in use (no argument: back to TEXT_RULES). Only for measuring: the
 * corpus hold-out test scores one half of the corpus without the rules that only the other half
 * motivated.
 */
export function useTextRules(rules?: readonly TextRule[]): void {
  textRules = rules ?? TEXT_RULES;
}

/** The first text rule that matches: the one that decides when the status code does not. */
export function matchTextRule(text: string): TextRule | null {
  for (const rule of textRules) if (rule.pattern.test(text)) return rule;
  return null;
}

export function reasonFromText(text: string): Reason | null {
  return matchTextRule(text)?.reason ?? null;
}

/**
 * A recipient is accepted or refused at RCPT TO; a "user unknown" that answers the end of DATA
 * comes after the server has read the message, so it is a content filter hiding behind the
 * phrase (unless the enhanced code still says X.1.1, bad destination mailbox).
 */
// Yahoo checks the mailbox only at the end of DATA and says so plainly:
// "554 delivery error: dd This user doesn't have a yahoo.com account (x@yahoo.com) [0]"
const AFTER_DATA_UNKNOWN = /this user doesn't have an? \S+ account/i;

function adjustForCommand(reason: Reason, command: string | null | undefined, status: string, byText: boolean, text: string): Reason {
  // Refused before any recipient was named: at the greeting or HELO the server judges the
  // connecting host, at MAIL FROM the sender. Neither says anything about the recipient.
  if (REASONS[reason] !== 'transient' || reason === 'undefined') {
    if (command === 'CONNECT' || command === 'HELO' || command === 'EHLO') return 'ip_blocked';
    if (command === 'MAIL' && REASONS[reason] === 'permanent') return 'sender_rejected';
    if (command === 'MAIL' && reason === 'undefined') return 'sender_rejected';
  }
  if (reason !== 'user_unknown' || !byText || command === 'RCPT' || /^.\.1\.1$/.test(status)) return reason;
  if (AFTER_DATA_UNKNOWN.test(text)) return reason;
  // After DATA, or under an X.7.x code (refused for security or policy) with nothing tying it
  // to RCPT, the phrase is a filter's cover: "550 5.7.1 550 User Unknown: sabineko@example.org".
  if (command === 'DATA' || /^.\.7\./.test(status)) return 'content_filtered';
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
  const byText = reasonFromText(text);
  let reason: Reason =
    (byStatus?.decisive ? byStatus.reason : null) ??
    byText ??
    byStatus?.reason ??
    (code ? REPLY_RULES[code] : undefined) ??
    (input.action === 'delayed' ? 'expired' : cls === '4' ? 'temporary_failure' : 'undefined');
  reason = adjustForCommand(reason, input.command, status, reason === byText, text);
  // "Diagnostic-Code: x-unix; procmail: Couldn't create ..." is the local delivery program's
  // failure, whatever words it prints, unless it says the disk or quota is full.
  if (input.diagnosticType === 'x-unix' && reason !== 'mailbox_full' && reason !== 'system_full') reason = 'mailer_error';

  const bounceType = cls === '4' ? 'transient' : REASONS[reason];
  return { bounceType, reason, status };
}

/** Public entry point: classify one SMTP reply (code, enhanced status, text). */
export function classifyReply(input: ReplyInput): ReplyClassification {
  return classify({ smtpCode: input.smtpCode, status: input.status, text: input.text });
}

const COMMANDS: readonly [RegExp, string][] = [
  // Postfix: "(in reply to RCPT TO command)", "(in reply to end of DATA command)"
  [/in reply to (?:end of )?(DATA|RCPT|MAIL|HELO|EHLO)\b/i, ''],
  // Exim: "SMTP error from remote mail server after RCPT TO:<a@b>:", "after end of data"
  [/after (?:end of )?(DATA|RCPT|MAIL|HELO|EHLO)\b/i, ''],
  // qmail: "192.0.2.153 does not like recipient."; DragonFly: "did not like our final DATA"
  [/(?:does not|doesn't|did not|didn't) like recipient/i, 'RCPT'],
  [/(?:does not|doesn't|did not|didn't) like (?:our final )?DATA/i, 'DATA'],
  [/(?:does not|doesn't|did not|didn't) like sender/i, 'MAIL'],
  // Yahoo: "550 5.1.1 <kijitora@example.org>... User Unknown [RCPT_TO]"
  [/\[(RCPT)_TO\]/i, ''],
  // Exim: "SMTP error from remote mail server after initial connection:"
  // qmail: "Connected to 192.0.2.112 but my name was rejected."
  [/after initial connection|greeting|my name was rejected|connected to \S+ but (?:greeting|connection) failed/i, 'CONNECT'],
];

/** Which SMTP command a diagnostic or transcript says the failing reply answered. */
export function commandFromText(text: string): string | null {
  // Sendmail transcript: the last ">>> COMMAND" before the first "<<< 4xx/5xx" reply. With
  // PIPELINING the RCPT replies arrive after DATA was sent; Sendmail then adds its own line
  // "550 5.1.1 <a@b>... User unknown" for the refused recipient, which marks a RCPT failure.
  const reply = /^<<<\s*[45]\d\d.*$/m.exec(text);
  if (reply) {
    const sent = [...text.slice(0, reply.index).matchAll(/^>>>\s*([A-Za-z]+)/gm)];
    const last = sent[sent.length - 1]?.[1]!.toUpperCase();
    const after = text.slice(reply.index + reply[0].length, reply.index + reply[0].length + 300);
    if (last === 'DATA' && /^\s*[45]\d\d 5\.1\.1 <[^>]+>\.\.\. User unknown/im.test(after)) return 'RCPT';
    if (last) return last.startsWith('RCPT') ? 'RCPT' : last.startsWith('MAIL') ? 'MAIL' : last;
  }
  for (const [pattern, fixed] of COMMANDS) {
    const m = pattern.exec(text);
    if (m) return fixed || m[1]!.toUpperCase();
  }
  return null;
}
