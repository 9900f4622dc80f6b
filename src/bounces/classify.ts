// The one classifier for SMTP replies, used for synchronous replies during delivery and for the
// diagnostics found in reports. The enhanced status code is read first (its class, and for the
// codes that say one precise thing, the reason), the reply code second, the text last.

import { findFailureEnhanced, findReplyCode, fold, statusClass } from './codes.ts';
import { REASONS, REPLY_RULES, STATUS_RULES, TEXT_RULES, type Reason, type Term, type TextRule } from './rules.ts';
import { joinTerms } from './rule-data.ts';
import type { ReplyClassification, ReplyInput } from './types.ts';
import { REPORT_LIMITS } from './limits.ts';

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

/** One text rule as it is in use: all its terms, or only those whose evidence is allowed. */
interface ActiveRule {
  rule: TextRule;
  pattern: RegExp | null;
  terms: readonly Term[];
}

/** The text rules a classification reads, in order. */
export type TextRuleSet = readonly ActiveRule[];

/** Every rule with all its terms: what the service uses. */
export const ALL_TEXT_RULES: TextRuleSet = TEXT_RULES.map((rule) => ({ rule, pattern: rule.pattern, terms: rule.terms }));

/**
 * The rules without the evidence of some corpus families, for measuring: leave-one-family-out
 * scores a family with the terms that are cited from a public source or were seen in another
 * family, as if its own files had never been read.
 */
export function withheldRules(families: Iterable<string>): TextRuleSet {
  const withheld = new Set(families);
  const usable = (t: Term) => t.cites.length > 0 || t.seen.some((f) => !withheld.has(f));
  return TEXT_RULES.map((rule) => {
    const terms = rule.terms.filter(usable);
    return { rule, pattern: joinTerms(terms), terms };
  });
}

export interface TextMatch {
  rule: TextRule;
  /** Index of the rule in TEXT_RULES. */
  index: number;
  term: Term;
  /** The words of the reply that matched. */
  words: string;
}

function matchOne(a: ActiveRule, index: number, text: string): TextMatch | null {
  if (!a.pattern?.test(text)) return null;
  const term = a.terms.find((t) => t.pattern.test(text))!;
  return { rule: a.rule, index, term, words: term.pattern.exec(text)![0] };
}

/** The first text rule that matches: the one that decides when the status code does not. */
export function matchTextRule(text: string, rules: TextRuleSet = ALL_TEXT_RULES): TextMatch | null {
  // The rules are many and some are broad; they see a bounded text, whatever a report holds.
  const probe = text.slice(0, REPORT_LIMITS.classifyText);
  for (let i = 0; i < rules.length; i++) {
    const m = matchOne(rules[i]!, i, probe);
    if (m) return m;
  }
  return null;
}

/** Every text rule that matches, in order (what `bounce explain` lists as the words found). */
export function matchAllTextRules(text: string): TextMatch[] {
  const probe = text.slice(0, REPORT_LIMITS.classifyText);
  const out: TextMatch[] = [];
  for (let i = 0; i < ALL_TEXT_RULES.length; i++) {
    const m = matchOne(ALL_TEXT_RULES[i]!, i, probe);
    if (m) out.push(m);
  }
  return out;
}

/** Every vocabulary a classifier text matches, in rule order: `signal: "words"` (for explain). */
export function explainWords(text: string): string[] {
  return matchAllTextRules(text).map((m) => `${m.rule.signal}: "${m.words}"`);
}

export function reasonFromText(text: string, rules: TextRuleSet = ALL_TEXT_RULES): Reason | null {
  return matchTextRule(text, rules)?.rule.reason ?? null;
}

// Yahoo checks the mailbox only at the end of DATA and says so plainly:
// "554 delivery error: dd This user doesn't have a yahoo.com account (x@yahoo.com) [0]"
// (Yahoo Sender Hub, "SMTP error codes").
const AFTER_DATA_UNKNOWN = /this user doesn't have an? \S+ account/i;

/**
 * The SMTP command the reply answered changes what it can mean (Sisimai reasons "blocked",
 * "rejected", "filtered"). Returns the new reason and why, or null when the command changes
 * nothing.
 */
function adjustForCommand(reason: Reason, command: string | null | undefined, status: string, byText: boolean, text: string): [Reason, string] | null {
  // Refused before any recipient was named: at the greeting or HELO the server judges the
  // connecting host, at MAIL FROM the sender. Neither says anything about the recipient.
  if (REASONS[reason] !== 'transient' || reason === 'undefined') {
    if (command === 'CONNECT' || command === 'HELO' || command === 'EHLO') return ['ip_blocked', `refused at ${command}: the connecting host, not the recipient`];
    if (command === 'MAIL' && (REASONS[reason] === 'permanent' || reason === 'undefined'))
      return ['sender_rejected', 'refused at MAIL FROM: the sender, not the recipient'];
  }
  if (reason !== 'user_unknown' || !byText || /^.\.1\.1$/.test(status) || AFTER_DATA_UNKNOWN.test(text)) return null;
  // An X.7 code says the refusal is about security or policy (RFC 3463 §3.8), whatever the
  // words: "554 5.7.1 <x>: Recipient address rejected: User unknown" is an access rule's text
  // (Postfix answers a real unknown user with 5.1.1). Ambiguous, so not suppressed.
  if (/^.\.7\./.test(status)) return ['content_filtered', `"does not exist" under ${status}, a security or policy code: ambiguous, not suppressed`];
  // A recipient is accepted or refused at RCPT TO; a "user unknown" that answers the end of
  // DATA comes after the server has read the message, so it is a content filter hiding behind
  // the phrase.
  if (command === 'RCPT') return null;
  if (command === 'DATA') return ['content_filtered', '"does not exist" after the end of DATA: a content filter\'s cover'];
  // Nothing ties it to RCPT and the code's subject is not the address: X.2 mailbox status (the
  // mailbox exists; X.2.1 disabled "may be permanent or transient"), X.3 mail system status.
  // "550 5.2.1 <x>... User Unknown": Sisimai reads X.2.0/X.2.1 as "filtered" too.
  if (/^.\.[23]\./.test(status))
    return ['content_filtered', `"does not exist" under ${status}, which is not about the address, and not tied to RCPT: ambiguous, not suppressed`];
  return null;
}

/** What the classifier saw and which rule decided: `mailsvc bounce explain`. */
export interface Explanation {
  /** The enhanced status code used, and where it came from. */
  status: string;
  statusFrom: 'report' | 'reply text' | 'reply code' | 'delay' | 'none';
  replyCode: number | null;
  /** The SMTP command the reply answered, when the report says it. */
  command: string | null;
  /** The folded text the rules read (`explainWords` lists every vocabulary it matches). */
  text: string;
  /** The rule that decided the reason, then any rule that changed it. */
  decidedBy: string[];
}

export interface Classification extends ReplyClassification {
  reason: Reason;
  explanation: Explanation;
}

const describe = (m: TextMatch) => `text rule #${m.index} ${m.rule.signal}: "${m.words}"`;

export function classify(input: ClassifyInput, rules: TextRuleSet = ALL_TEXT_RULES): Classification {
  const text = fold((input.text ?? '').slice(0, REPORT_LIMITS.classifyText));
  const given = normaliseStatus(input.status);
  const inText = normaliseStatus(findFailureEnhanced(text));
  // A generic "X.0.0" in a Status field says less than the precise code the remote host wrote.
  const precise = given && /^.\.0\.0$/.test(given) && inText && inText[0] === given[0] ? inText : given;
  const code = input.smtpCode ?? findReplyCode(text);
  const fromCode = code ? (String(code)[0] as '4' | '5') : null;
  const cls = statusClass(precise ?? inText) ?? fromCode ?? (input.action === 'delayed' ? '4' : '5');
  const status = precise ?? inText ?? `${cls}.0.0`;
  const statusFrom: Explanation['statusFrom'] =
    precise && precise === given ? 'report' : (precise ?? inText) ? 'reply text' : fromCode ? 'reply code' : input.action === 'delayed' ? 'delay' : 'none';

  // Signal order: (1) a decisive enhanced code, (2) the first text rule, (3) the enhanced code's
  // meaning, (4) the reply code's meaning, (5) nothing said: undefined (never suppressed).
  const byStatus = statusRule(status);
  const byText = matchTextRule(text, rules);
  const decidedBy: string[] = [];
  let reason: Reason;
  if (byStatus?.decisive) {
    reason = byStatus.reason;
    decidedBy.push(`status ${status} (decisive: ${reason})`);
  } else if (byText) {
    reason = byText.rule.reason;
    decidedBy.push(describe(byText));
  } else if (byStatus) {
    reason = byStatus.reason;
    decidedBy.push(`status ${status} (${reason})`);
  } else if (code && REPLY_RULES[code]) {
    reason = REPLY_RULES[code];
    decidedBy.push(`reply code ${code} (${reason})`);
  } else {
    reason = input.action === 'delayed' ? 'expired' : cls === '4' ? 'temporary_failure' : 'undefined';
    decidedBy.push(`nothing specific: ${reason}`);
  }
  const adjusted = adjustForCommand(reason, input.command, status, !byStatus?.decisive && !!byText, text);
  if (adjusted) {
    reason = adjusted[0];
    decidedBy.push(adjusted[1]);
  }
  // "Diagnostic-Code: x-unix; procmail: Couldn't create ..." is the local delivery program's
  // failure, whatever words it prints, unless it says the disk or quota is full.
  if (input.diagnosticType === 'x-unix' && reason !== 'mailbox_full' && reason !== 'system_full') {
    reason = 'mailer_error';
    decidedBy.push('Diagnostic-Code type x-unix: the local delivery program failed');
  }

  const bounceType = cls === '4' ? 'transient' : REASONS[reason];
  if (cls === '4' && REASONS[reason] !== 'transient') decidedBy.push(`class 4 (${status}): transient whatever the reason`);
  const explanation: Explanation = {
    status,
    statusFrom,
    replyCode: code,
    command: input.command ?? null,
    text,
    decidedBy,
  };
  return { bounceType, reason, status, explanation };
}

/** Public entry point: classify one SMTP reply (code, enhanced status, text). */
export function classifyReply(input: ReplyInput): ReplyClassification {
  const { bounceType, reason, status } = classify({ smtpCode: input.smtpCode, status: input.status, text: input.text });
  return { bounceType, reason, status };
}

const COMMANDS: readonly [RegExp, string][] = [
  // Postfix: "(in reply to RCPT TO command)", "(in reply to end of DATA command)"
  [/in reply to (?:end of )?(DATA|RCPT|MAIL|HELO|EHLO)\b/i, ''],
  // Exim: "SMTP error from remote mail server after RCPT TO:<a@b>:", "after end of data"
  [/after (?:end of )?(DATA|RCPT|MAIL|HELO|EHLO)\b/i, ''],
  // m-FILTER: "-------SMTP command\nDATA"; MailEnable-style "Technical details: SMTP:RCPT host"
  [/\bSMTP(?: command)?[:\s-]+(DATA|RCPT|MAIL|HELO|EHLO)\b/i, ''],
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
export function commandFromText(whole: string): string | null {
  const text = whole.slice(0, REPORT_LIMITS.classifyText);
  // Sendmail transcript: the last ">>> COMMAND" before the first "<<< 4xx/5xx" reply. With
  // PIPELINING the RCPT replies arrive after DATA was sent; Sendmail then adds its own line
  // "550 5.1.1 <a@b>... User unknown" for the refused recipient, which marks a RCPT failure.
  const reply = /^<<<\s*[45]\d\d.*$/m.exec(text);
  if (reply) {
    const sent = [...text.slice(0, reply.index).matchAll(/^>>>\s*([A-Za-z]+)/gm)];
    const last = sent[sent.length - 1]?.[1]!.toUpperCase();
    const after = text.slice(reply.index + reply[0].length, reply.index + reply[0].length + 300);
    if (last === 'DATA' && after.split('\n').some((line) => /^[ \t]*[45]\d\d 5\.1\.1 <[^>]+>\.\.\. User unknown/i.test(line))) return 'RCPT';
    if (last) return last.startsWith('RCPT') ? 'RCPT' : last.startsWith('MAIL') ? 'MAIL' : last;
  }
  for (const [pattern, fixed] of COMMANDS) {
    const m = pattern.exec(text);
    if (m) return fixed || m[1]!.toUpperCase();
  }
  return null;
}
