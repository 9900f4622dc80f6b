// Where failure notices put the recipient, and where they start quoting the original message.
// Each pattern carries the lines of real notices it was written for (`examples`, anonymised as
// the corpus is); test/bounces/rules.test.ts checks that each line is read by its own pattern,
// not an earlier one, and yields the address given. The address is always capture group 1;
// cleanAddress() strips brackets and punctuation afterwards.

// Domain labels are dot-separated runs, so where the domain ends is never in doubt: a domain
// that could end at any dot made a line like "-@0...-0...-…" cost time quadratic in its length.
const LABEL = String.raw`[A-Za-z0-9\-\[\]:]*[A-Za-z0-9\]]`;
const A = String.raw`<?((?:"[^"]+"|[^\s<>()"',;:@]+)@${LABEL}(?:\.${LABEL})*)>?`;

/** A line of a real notice and the recipient address it names. */
export type LeadExample = readonly [line: string, address: string];

export interface LeadPattern {
  examples: readonly [LeadExample, ...LeadExample[]];
  pattern: RegExp;
  /** A recipient position (the line is about that address) rather than a passing mention. */
  strong: boolean;
  /** The line itself is the whole diagnostic (lines that follow belong to other hosts). */
  oneLine?: boolean;
}

const lead = (examples: LeadPattern['examples'], pattern: RegExp, strong = true, oneLine = false): LeadPattern => ({ examples, pattern, strong, oneLine });

export const NOTICE_LEADS: readonly LeadPattern[] = [
  // qmail, Postfix text part, Yahoo:  "<kijitora@example.org>:"
  //   then "Remote host said: 550 5.1.1 <kijitora@example.org>... User Unknown"
  lead(
    [
      ['<kijitora@example.jp>:', 'kijitora@example.jp'],
      ['  <neko@example.co.jp>: [127.0.0.1] said:', 'neko@example.co.jp'],
    ],
    new RegExp(String.raw`^\s*<([^\s<>@]+@[^\s<>]+)>\s*:`),
  ),
  // Exim, Gmail: the address alone on its line, often indented
  //   "  kijitora@example.jp" / "     userunknown@example.jp"
  // GMX: '"shironeko@example.jp":'
  // Sendmail-style text (Active!Hunter, V5 sendmail): ">>> kijitora@example.org <kijitora@example.org>"
  // X3: "   * kijitora@example.com"
  lead(
    [
      ['  kijitora@example.jp', 'kijitora@example.jp'],
      ['"shironeko@example.jp":', 'shironeko@example.jp'],
      ['>>> kijitora@example.org <kijitora@example.org>', 'kijitora@example.org'],
      ['   * kijitora@example.com', 'kijitora@example.com'],
    ],
    new RegExp(String.raw`^\s*(?:>>>\s*|[*\u2022-]\s+)?"?${A}"?\s*(?::\s*)?(?:<[^<>\s]+>\s*)?(?:\.{3}.*)?$`),
  ),
  // Sendmail transcript: "554 <kijitora@example.edu>... Remote protocol error: Connection reset"
  lead(
    [
      ['554 <kijitora@example.edu>... Remote protocol error: Connection reset by peer during result wait with example.edu', 'kijitora@example.edu'],
      ['550 <kijitora@example.org>... User unknown', 'kijitora@example.org'],
    ],
    new RegExp(String.raw`^[45]\d\d <${A}>\.\.\.\s`),
    true,
    true,
  ),
  // Exim with routing detail: "  kijitora@example.jp (generated from neko@example.jp)"
  //   "  kijitora@example.jp <neko@example.jp>: ..."
  lead(
    [
      ['  kijitora@example.jp (generated from neko@example.jp)', 'kijitora@example.jp'],
      ['userunknown@example.jp: 550 5.1.1 <userunknown@example.jp>... User Unknown', 'userunknown@example.jp'],
    ],
    new RegExp(String.raw`^\s{0,8}${A}\s*(?:\(generated from|\(expanded from|<[^>]+>:|:\s+\S)`),
  ),
  // Exchange 2003: "kijitora@example.co.jp on Thu, 29 Apr 2007 16:51:51 -0500"
  lead([['kijitora@example.co.jp on Thu, 29 Apr 2007 16:51:51 -0500', 'kijitora@example.co.jp']], new RegExp(String.raw`^\s*${A}\s+on\s+\w{3},`)),
  // Notes, Domino, mail.ru and others: "Recipient: <kijitora@example.jp>"
  //   "Failed recipient: kijitora@example.jp", "Original-Recipient: rfc822;kijitora@example.jp"
  // (a bare "To:" is not one: Exchange quotes the original's To: above the failed recipients)
  lead(
    [
      ['    Recipient: <kijitora@example.jp>', 'kijitora@example.jp'],
      [' recipient: error+1826111378@example.com', 'error+1826111378@example.com'],
      ['Failed recipient: kijitora@example.jp', 'kijitora@example.jp'],
    ],
    new RegExp(
      String.raw`^\s*(?:failed |final[- ]|original[- ]|intended |invalid )?(?:recipient(?:\(s\))?|addressee|e-?mail address)\s*:\s*(?:rfc822;\s*)?${A}\s*$`,
      'i',
    ),
  ),
  // DragonFly: "There was an error delivering your mail to <postmaster@cx.example.org>."
  // IMail: "undeliverable to kijitora@example.jp"
  // au one net: "     Could not be delivered to: <kijitora@example.dion.ne.jp>"
  // X6: "The following recipients returned permanent errors: kijitora@nyaan.example.org. Reason: ..."
  // Zoho: "[Status: Error, Address: <kijitora@6kaku.example.co.jp>, ResponseCode 421, , Host not reachable.]"
  lead(
    [
      ['There was an error delivering your mail to <postmaster@cx.example.org>.', 'postmaster@cx.example.org'],
      ['     Could not be delivered to: <kijitora@example.dion.ne.jp>', 'kijitora@example.dion.ne.jp'],
      ['[Status: Error, Address: <kijitora@6kaku.example.co.jp>, ResponseCode 421, , Host not reachable.]', 'kijitora@6kaku.example.co.jp'],
    ],
    new RegExp(
      String.raw`(?:error delivering your (?:mail|message) to|undeliverable to|could not be delivered to:|returned (?:permanent |temporary )?errors?:|\bAddress:)\s*${A}`,
      'i',
    ),
  ),
  // fml: "Duplicated Message-ID in <neko@example.co.jp>."
  lead([['Duplicated Message-ID in <neko@example.co.jp>.', 'neko@example.co.jp']], new RegExp(String.raw`^Duplicated Message-ID in ${A}`, 'i')),
  // Lotus Notes: "Your message ... was not delivered to: kijitora@example.jp"
  lead(
    [
      ['The following message to <shironeko@example.co.jp> was undeliverable.', 'shironeko@example.co.jp'],
      ['    The mail server could not deliver mail to kijitora@example.net.  The account or domain may not exist', 'kijitora@example.net'],
    ],
    new RegExp(String.raw`(?:deliver(?:ing|ed)?|sen[dt]|message|mail|e-?mail) (?:\S+ ){0,4}to:?\s+${A}[.:,]?\s*(?:\(|$|was|is|has|could|failed|because|\.)`, 'i'),
    false,
  ),
  // ezweb, KDDI, Japanese carriers: "<kijitora@ezweb.ne.jp>" inside a sentence in the text,
  // and SMTP transcripts: "RCPT TO:<kijitora@example.jp>"
  lead(
    [
      ['>>> RCPT TO:<kijitora@example.org>', 'kijitora@example.org'],
      ['    SMTP error from remote mail server after RCPT TO:<kijitora@example.jp>:', 'kijitora@example.jp'],
    ],
    new RegExp(String.raw`RCPT TO:\s*${A}`, 'i'),
  ),
  // Zoho: "kijitora@example.co.jp Invalid Address, ERROR_CODE :550, ERROR_CODE :5.1.1 ..."
  lead(
    [['kijitora@example.co.jp Invalid Address, ERROR_CODE :550, ERROR_CODE :5.1.1 <kijitora@example.co.jp>... User Unknown', 'kijitora@example.co.jp']],
    new RegExp(String.raw`^\s*${A}\s*(?:[.:]\s*)?\S`),
    false,
  ),
  // IMail: "User mailbox exceeds allowed size: kijitora@example.co.jp"
  lead([['User mailbox exceeds allowed size: kijitora@example.co.jp', 'kijitora@example.co.jp']], new RegExp(String.raw`^[^:<>@]{3,80}:\s+${A}\s*$`), false),
];

/**
 * Lines that begin the quoted original message in a one-part notice, each with real ones. Each
 * pattern is tried on one line at a time (the first REPORT_LIMITS.lineChars characters), never
 * on the whole text: a ruled line of 80,000 dashes once cost seconds.
 */
export interface OriginalMarker {
  examples: readonly [string, ...string[]];
  pattern: RegExp;
}

export const ORIGINAL_MARKERS: readonly OriginalMarker[] = [
  {
    // qmail, Exim, Gmail, Courier: a ruled line that says what follows.
    examples: [
      '--- Below this line is a copy of the message.',
      '------ This is a copy of the message, including all the headers. ------',
      '----- Original message -----',
      '--- Original message follows.',
    ],
    pattern: /^[ \t]*[-=_*]{2}.*?(?:original|copy of (?:the|your) message|returned message|undelivered message|unsent message|message headers|headers of)/i,
  },
  {
    // DragonFly: "Message headers follow."   Exchange: "Original message headers:"
    examples: ['Message headers follow.', 'Original message headers:'],
    pattern:
      /^[ \t]*(?:message headers follow|original message(?: headers)?(?: follows)?|below this line is a copy of the message|the original message headers|headers of the original message|unsent message below|returned message|the header of the original message)[.:]?[ \t]*$/i,
  },
  {
    // A header block at column 0: the quoted message started without a marker.
    examples: ['Received: from mail.example.jp (mail.example.jp [192.0.2.1]) by mx.example.org'],
    pattern: /^(?:Return-Path|Received|DKIM-Signature|X-Received|ARC-Seal): /,
  },
  {
    // A quoted part boundary left in a one-part notice.
    examples: ['Content-Type: message/rfc822'],
    pattern: /^Content-Type: message\/rfc822/i,
  },
];
