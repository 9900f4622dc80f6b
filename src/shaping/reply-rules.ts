// Reply-driven adaptation (SPEC §11): the big providers' throttling and temporary-block replies,
// each pinned by the real reply it was written for, and the matcher that configured and built-in
// rules share. Callers compile `[...configured, ...BUILT_IN_REPLY_RULES]`: the first match wins.
//
// The built-ins only ever match a 4xx reply: each is a regular expression anchored on the reply
// code at the start of the reply line, so a permanent refusal is never turned into a deferral.
// Replies that only concern one recipient (Gmail's 450 4.2.1 "receiving mail at a rate", iCloud's
// 421 4.7.1 "Messages to <address> deferred due to excessive volume", Yandex's 451 4.5.1 "The
// recipient has exceeded their message rate limit") are left to the ordinary retry of that
// recipient: holding the whole group for them would delay everyone else's mail.
//
// A reply comes from a stranger's server, so what a rule reads is capped (REPLY_MATCH_CHARS) and
// every built-in pattern is linear: anchored, with bounded gaps (`.{0,N}`) and no nested
// quantifiers. Configured patterns are checked for nested quantifiers when they are compiled.

import type { BuiltInReplyRule, ReplyRule } from './types.ts';

/** A built-in rule with the real replies it was written for (test/shaping/reply-rules.test.ts). */
export interface PinnedReplyRule extends BuiltInReplyRule {
  examples: readonly [string, ...string[]];
}

const KUMO = "KumoMTA's shipped shaping defaults, assets/policy-extras/shaping.toml (github.com/KumoCorp/kumomta)";
const KUMO_COMMUNITY = "KumoMTA's community shaping file, assets/community/shaping.toml (github.com/KumoCorp/kumomta)";
const GMAIL_CODES = 'Google Workspace Admin Help, "Gmail SMTP errors and codes" (support.google.com/a/answer/3726730)';
const YAHOO_CODES = 'Yahoo Sender Hub, "SMTP error codes" (senders.yahooinc.com/smtp-error-codes)';

export const BUILT_IN_REPLY_RULES: readonly PinnedReplyRule[] = [
  {
    provider: 'google',
    match: String.raw`/^421 4\.7\.28\b/i`,
    action: 'throttle',
    seconds: 3600,
    source:
      `${GMAIL_CODES}: 421 4.7.28, mail from the sending IP, SPF or DKIM domain "has been temporarily rate limited". ` +
      "Halving the group's rate for an hour is ours (KumoMTA's community file drops Gmail to 10 a minute for 30 minutes on the same reply).",
    examples: [
      '421-4.7.28 [203.0.113.42] Our system has detected an unusual rate of\r\n421-4.7.28 unsolicited mail originating from your IP address. To protect our\r\n' +
        '421-4.7.28 users from spam, mail sent from your IP address has been temporarily\r\n421 4.7.28 rate limited. Please visit\r\n' +
        '421 4.7.28 https://support.google.com/mail/?p=UnsolicitedRateLimitError to\r\n421 4.7.28 review our Bulk Email Senders Guidelines. - gsmtp',
      '421 4.7.28 Gmail has detected an unusual rate of unsolicited mail originating from your SPF domain. To protect our users from spam, ' +
        'mail sent from your domain has been temporarily rate limited. Please visit https://support.google.com/mail/?p=UnsolicitedRateLimitError ' +
        'to review our Bulk Email Senders Guidelines. - gsmtp',
    ],
  },
  {
    // Before 4.7.28 existed (and still from some Google servers) the same limit came as 4.7.0.
    provider: 'google',
    match: String.raw`/^421 4\.7\.0 .{0,80}\bunusual rate of unsolicited mail\b/i`,
    action: 'throttle',
    seconds: 3600,
    source: `${GMAIL_CODES}, the older 4.7.0 form of the 4.7.28 reply ("has been temporarily rate limited"); the hour is ours, as for 4.7.28.`,
    examples: [
      '421-4.7.0 [192.0.2.80 15] Our system has detected an unusual rate of\n421-4.7.0 unsolicited mail originating from your IP address. To protect our\n' +
        '421-4.7.0 users from spam, mail sent from your IP address has been temporarily\n421-4.7.0 rate limited. Please visit\n' +
        '421-4.7.0 https://support.google.com/mail/?p=UnsolicitedRateLimitError to\n421 4.7.0 review our Bulk Email Senders Guidelines. p4si3522070uam.9 - gsmtp',
    ],
  },
  {
    provider: 'google',
    match: String.raw`/^421 4\.7\.0 Try again later, closing connection\b/i`,
    action: 'reconnect-later',
    seconds: 300,
    source: `${GMAIL_CODES}: 421 4.7.0 "Try again later, closing connection", which "usually indicates a Denial of Service (DoS) ... at the HELO stage". Five minutes is ours.`,
    examples: ['421 4.7.0 Try again later, closing connection. - gsmtp'],
  },
  {
    // Inside 4.7.500-699 (next rule): a connection limit, answered by closing this connection.
    provider: 'microsoft',
    match: String.raw`/^451 4\.7\.652\b/i`,
    action: 'reconnect-later',
    seconds: 300,
    source:
      'Exchange Online Protection (Microsoft 365 and Outlook.com), 451 4.7.652 "has exceeded the maximum number of connections", ' +
      'as quoted by Sisimai (github.com/sisimai/go-sisimai, rhost/for-microsoft.go). Five minutes is ours.',
    examples: [
      '451 4.7.652 The mail server [192.0.2.251] has exceeded the maximum number of connections. (S3115) [Name=Protocol Filter Agent][AGT=PFA]' +
        '[MxId=11BA9B3FA168ABBF] [BN3PEPF0000B370.namprd21.prod.outlook.com 2025-02-20T14:30:32.425Z 08DD4D9FD5AFF45C]',
    ],
  },
  {
    provider: 'microsoft',
    match: String.raw`/^451 4\.7\.[56]\d\d\b/i`,
    action: 'suspend',
    seconds: 1800,
    source:
      'Microsoft Learn, "Fix error code 451 4.7.500-699 (ASxxx) in Exchange Online" (learn.microsoft.com/exchange/mail-flow-best-practices/' +
      'non-delivery-reports-in-exchange-online/fix-error-code-451-4-7-500-699-asxxx-in-exchange-online): the sending IP is temporarily ' +
      `deferred for its reputation. Thirty minutes is the suspension ${KUMO_COMMUNITY} gives "Server busy. Please try again later" and ` +
      '"has been temporarily rate limited" from Outlook.',
    examples: [
      '451 4.7.500 Server busy. Please try again later from [192.0.2.64]. (S77719) [FR2DEU01FT008.eop-deu01.prod.protection.outlook.com]',
      '451 4.7.650 The mail server [192.0.2.5] has been temporarily rate limited due to IP reputation. For e-mail delivery information, ' +
        'see https://postmaster.live.com (S775) [AMS0EPF0000019C.eurprd05.prod.outlook.com]',
    ],
  },
  {
    provider: 'outlook',
    match: String.raw`/^421 RP-001\b/i`,
    action: 'throttle',
    seconds: 3600,
    source:
      'Outlook.com postmaster, "Troubleshooting" (sendersupport.olc.protection.outlook.com/pm/troubleshooting.aspx): RP-001, the sending IP ' +
      'exceeded a rate limit set by its reputation ("We have limits for how many messages can be sent per hour and per day"). The hour is ours.',
    examples: [
      "421 RP-001 (COL0-MC1-F12) Unfortunately, some messages from 192.0.2.177 weren't sent. Please try again. We have limits for how many " +
        'messages can be sent per hour and per day. You can also refer to http://mail.live.com/mail/troubleshooting.aspx#errors.',
    ],
  },
  {
    provider: 'outlook',
    match: String.raw`/^421 RP-002\b/i`,
    action: 'reconnect-later',
    seconds: 60,
    source:
      'Outlook.com postmaster, "Troubleshooting" (sendersupport.olc.protection.outlook.com/pm/troubleshooting.aspx): RP-002, too much mail ' +
      "on one connection. We found no RP-002 reply published in full: the text after the code is RP-001's. The minute is ours; the " +
      "group's perConnection is the lasting fix.",
    examples: ["421 RP-002 (SNT004-MC2F12) Unfortunately, some messages from 192.0.2.177 weren't sent. Please try again."],
  },
  {
    provider: 'outlook',
    match: String.raw`/^421 RP-003\b/i`,
    action: 'reconnect-later',
    seconds: 300,
    source:
      'Outlook.com postmaster, "Troubleshooting" (sendersupport.olc.protection.outlook.com/pm/troubleshooting.aspx): RP-003, too many ' +
      "simultaneous connections. We found no RP-003 reply published in full: the text after the code is RP-001's. Five minutes is " +
      "ours; the group's connections is the lasting fix.",
    examples: ["421 RP-003 (BAY004-MC1F21) Unfortunately, some messages from 192.0.2.177 weren't sent. Please try again."],
  },
  {
    // IPTS04 is the same deferral keyed on the IP; Yahoo Japan answers [TSS04] without 4.7.0.
    provider: 'yahoo',
    match: String.raw`/^421 (?:4\.7\.0 )?\[(?:TSS|IPTS)04\]/i`,
    action: 'suspend',
    seconds: 7200,
    source:
      `${YAHOO_CODES}: TSS04, messages "temporarily deferred due to unexpected volume or user complaints". Two hours is the suspension ` +
      `${KUMO} gives it under [provider."yahoo"] (KumoMTA issue #51: "stop sending over that IP to the Yahoo MX group for two hours").`,
    examples: [
      '421 4.7.0 [TSS04] Messages from 192.0.2.25 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1; ' +
        'see https://postmaster.yahooinc.com/error-codes',
      '421 [IPTS04] Messages from 192.0.2.25 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1; ' +
        'see https://postmaster.yahooinc.com/error-codes',
    ],
  },
  {
    provider: 'yahoo',
    match: String.raw`/^421 (?:4\.7\.0 )?\[TSS?0[12]\]/i`,
    action: 'suspend',
    seconds: 7200,
    source:
      `${YAHOO_CODES} and Yahoo's older postmaster pages (postmaster.yahoo.com/421-ts01.html): TS01, TS02 and TSS02, messages deferred ` +
      'for user complaints (TSS02 also for an unverified IP or domain). Two hours is ours, as for TSS04.',
    examples: [
      '421 4.7.0 [TS01] Messages from 192.0.2.177 temporarily deferred due to user complaints - 4.16.55.1; see http://postmaster.yahoo.com/421-ts01.html',
      '421 4.7.0 [TSS02] Messages from 198.51.100.1 temporarily deferred due to user complaints or because the IP/domain is in the unverified ' +
        'category. Please make sure that your email is RFC-5321 compliant.',
    ],
  },
  {
    provider: 'yahoo',
    match: String.raw`/^421 (?:4\.7\.1 )?\[TS03\]/i`,
    action: 'suspend',
    seconds: 14400,
    source:
      `${YAHOO_CODES} and Yahoo's older postmaster pages (help.yahoo.com/kb/postmaster/SLN3436.html): TS03, "All messages from a.b.c.d will ` +
      'be permanently deferred; Retrying will NOT succeed", though as a 421. Four hours is ours.',
    examples: [
      '421 4.7.1 [TS03] All messages from 192.0.2.209 will be permanently deferred; Retrying will NOT succeed. See https://help.yahoo.com/kb/postmaster/SLN3436.html',
    ],
  },
  {
    provider: 'yahoo',
    match: String.raw`/^421 (?:4\.\d{1,3}\.\d{1,3} )?Max message per connection reached\b/i`,
    action: 'reconnect-later',
    seconds: 1,
    source:
      'Yahoo, "Guidelines for establishing SMTP connections to Yahoo Mail" (help.yahoo.com/kb/SLN3433.html): after 20 messages the ' +
      'connection is closed and "you may try to reconnect to our MX servers immediately thereafter". Wording as quoted by Sisimai ' +
      '(github.com/sisimai/go-sisimai, rhost/for-yahooinc.go).',
    examples: ['421 Max message per connection reached, closing transmission channel'],
  },
  {
    provider: 'apple',
    match: String.raw`/^4\d\d (?:4\.\d{1,3}\.\d{1,3} )?Service unavailable - try again later\b/i`,
    action: 'suspend',
    seconds: 900,
    source:
      'iCloud Mail\'s "451 4.7.1 Service unavailable - try again later", seen when senders everywhere send at the top of the hour ' +
      `(smtp.codes/icloud). Fifteen minutes is the suspension ${KUMO_COMMUNITY} gives it under [provider."apple"].`,
    examples: ['451 4.7.1 Service unavailable - try again later'],
  },
  {
    provider: 'apple',
    match: String.raw`/^4\d\d (?:4\.\d{1,3}\.\d{1,3} )?\[HCM1\]/i`,
    action: 'suspend',
    seconds: 900,
    source: `iCloud Mail's "421 [HCM1] Your mail from a.b.c.d was deferred", as quoted with a 15-minute suspension in ${KUMO_COMMUNITY} under [provider."apple"].`,
    examples: ['421 [HCM1] Your mail from 192.0.2.1 was deferred.'],
  },
  {
    // GMX, WEB.DE (and their company's hosting MX) answer with a fixed text and a link whose
    // `c=` names the reason; a 4xx "Reject due to policy restrictions" is the temporary form.
    provider: 'gmx',
    match: String.raw`/^4\d\d .{0,120}\bReject due to policy restrictions\b/i`,
    action: 'suspend',
    seconds: 3600,
    source:
      'WEB.DE postmaster, "Error messages" (postmaster.web.de/error-messages): "Too many messages have been received in a short period of ' +
      `time. Please try again in a few hours and reduce the sending rate." The reply as a sender quoted it on suped.com ("How to resolve ` +
      `SMTP 421 errors with Web.de and GMX.net"). The hour is ours (${KUMO_COMMUNITY} drops GMX and WEB.DE to one message a minute ` +
      'for an hour on the same text).',
    examples: [
      '421 web.de (mxweb113) Nemesis ESMTP Service not available Service unavailable Reject due to policy restrictions Please try again later. ' +
        'Too many messages have been received in a short period of time. Please try again in a few hours and reduce the sending rate.',
    ],
  },
  {
    provider: 'mailru',
    match: String.raw`/^421 Try again later \([0-9a-f.:]{2,45}\)\. Please contact abuse@corp\.mail\.ru\b/i`,
    action: 'suspend',
    seconds: 3600,
    source:
      "Mail.ru's deferral of a sending IP, as mxs.mail.ru and emx.mail.ru give it in public Postfix logs (pastebin.com/d1n2BV7Y, " +
      "pastebin.com/GNTpxPz2); we found no page of Mail.ru's that documents it. The hour is ours.",
    examples: ['421 Try again later (192.0.2.58). Please contact abuse@corp.mail.ru.'],
  },
];

/**
 * Characters of a reply a rule reads, after its continuation lines are joined (replyLine). A
 * throttling reply says what it means in its first lines (Gmail's six-line 4.7.28 is about 330
 * characters joined); the cap bounds what any pattern, configured ones included, can cost.
 */
export const REPLY_MATCH_CHARS = 512;

// "421-4.7.28 unsolicited mail ..." continuing "421-4.7.28 [IP] Our system has ...".
const CONTINUATION = /^\d{3}[ -](?:\d\.\d{1,3}\.\d{1,3}(?: |$))?/;

/**
 * A reply as rules read it: a multi-line reply's lines joined with spaces, the repeated reply
 * code and enhanced status of each continuation line dropped ("421-4.7.0 ...\n421 4.7.0 ..."
 * reads "421 4.7.0 ... ..."), cut to REPLY_MATCH_CHARS.
 */
export function replyLine(reply: string): string {
  const lines = reply.slice(0, REPLY_MATCH_CHARS * 4).split(/\r?\n/);
  const parts = lines.map((line, i) => (i === 0 ? line.replace(/^(\d{3})-/, '$1 ') : line.replace(CONTINUATION, '')).trim());
  return parts
    .filter((part) => part !== '')
    .join(' ')
    .slice(0, REPLY_MATCH_CHARS);
}

/** A rule ready to match: its regular expression, or its substring lowercased. */
export interface CompiledReplyRule extends ReplyRule {
  /** The provider a built-in rule is for; absent for a configured rule. */
  readonly provider?: string;
  readonly pattern: RegExp | null;
  readonly needle: string | null;
}

const REGEX_FORM = /^\/(.+)\/([a-z]*)$/s;

/**
 * Compiles rules in their order. `match` of the form `/body/flags` is a regular expression as
 * written (add `i` for case-insensitivity); anything else is a case-insensitive substring. An
 * invalid expression, the stateful flags `g` and `y`, or a quantified group that holds another
 * quantifier (exponential on a crafted reply) throws an Error naming the rule: config validation
 * calls this at start.
 */
export function compileReplyRules(rules: readonly ReplyRule[]): CompiledReplyRule[] {
  return rules.map((rule) => {
    const base = { match: rule.match, action: rule.action, seconds: rule.seconds };
    const withProvider = 'provider' in rule && typeof rule.provider === 'string' ? { ...base, provider: rule.provider } : base;
    const form = REGEX_FORM.exec(rule.match);
    if (!form) return { ...withProvider, pattern: null, needle: rule.match.toLowerCase() };
    const body = form[1]!;
    const flags = form[2]!;
    const fail = (why: string) => new Error(`reply rule ${JSON.stringify(rule.match)}: ${why}`);
    if (/[gy]/.test(flags)) throw fail('the flags g and y are not allowed (they make a pattern remember where it last matched)');
    if (nestedQuantifier(body)) throw fail('a repeated group holds a quantifier of its own, which can take exponential time on a crafted reply');
    try {
      return { ...withProvider, pattern: new RegExp(body, flags), needle: null };
    } catch (err) {
      throw fail((err as Error).message);
    }
  });
}

/** The first rule, in the order compiled, that matches `reply` (read as replyLine reads it); null if none. */
export function matchReply(compiled: readonly CompiledReplyRule[], reply: string): CompiledReplyRule | null {
  const line = replyLine(reply);
  let lower: string | null = null;
  for (const rule of compiled) {
    if (rule.pattern) {
      if (rule.pattern.test(line)) return rule;
    } else {
      lower ??= line.toLowerCase();
      if (lower.includes(rule.needle!)) return rule;
    }
  }
  return null;
}

/**
 * Whether a regular expression repeats (`*`, `+`, `{n,}`, `{n,m}` with m > 1) a group that
 * itself matches a varying length through a quantifier, as in `(a+)+` or `(?:\s+\w+)*`: the
 * shape whose backtracking is exponential. Alternations of overlapping branches can be slow too
 * and are not caught; the length cap bounds what they can cost.
 */
function nestedQuantifier(source: string): boolean {
  const open: boolean[] = [];
  let varying = false; // the current group so far holds a quantifier
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      i++;
    } else if (c === '[') {
      for (i++; i < source.length && source[i] !== ']'; i++) if (source[i] === '\\') i++;
    } else if (c === '(') {
      open.push(varying);
      varying = false;
      if (source[i + 1] === '?') i += groupPrefix(source, i + 1);
    } else if (c === ')') {
      const inner = varying;
      varying = open.pop() ?? false;
      const q = quantifier(source, i + 1);
      if (inner && q.repeats) return true;
      if (inner || q.varies) varying = true;
      i += q.length;
    } else {
      const q = quantifier(source, i);
      if (q.varies) varying = true;
      if (q.length > 0) i += q.length - 1;
    }
  }
  return false;
}

/** Length of a group's `?:`, `?=`, `?!`, `?<=`, `?<!` or `?<name>` starting at `at`. */
function groupPrefix(source: string, at: number): number {
  if (source[at + 1] === '<' && source[at + 2] !== '=' && source[at + 2] !== '!') {
    const close = source.indexOf('>', at);
    return close < 0 ? 1 : close - at + 1;
  }
  return source[at + 1] === '<' ? 3 : 2;
}

/** The quantifier at `at`, if any, with a lazy `?` after it. */
function quantifier(source: string, at: number): { length: number; varies: boolean; repeats: boolean } {
  const c = source[at];
  let length = 0;
  let varies = false;
  let repeats = false;
  if (c === '*' || c === '+') [length, varies, repeats] = [1, true, true];
  else if (c === '?') [length, varies] = [1, true];
  else if (c === '{') {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(at, at + 24));
    if (m) {
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      [length, varies, repeats] = [m[0].length, max > min, max > 1];
    }
  }
  if (length > 0 && source[at + length] === '?') length++;
  return { length, varies, repeats };
}
