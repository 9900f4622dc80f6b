// Where failure notices put the recipient, and where they start quoting the original message.
// Each pattern has above it the line from a real notice it was written for. The address is
// always capture group 1; cleanAddress() strips brackets and punctuation afterwards.

const A = String.raw`<?((?:"[^"]+"|[^\s<>()"',;:]+)@[A-Za-z0-9.\-\[\]:]*[A-Za-z0-9\]])>?`;

export interface LeadPattern {
  pattern: RegExp;
  /** A recipient position (the line is about that address) rather than a passing mention. */
  strong: boolean;
  /** The line itself is the whole diagnostic (lines that follow belong to other hosts). */
  oneLine?: boolean;
}

const lead = (pattern: RegExp, strong = true, oneLine = false): LeadPattern => ({ pattern, strong, oneLine });

export const NOTICE_LEADS: readonly LeadPattern[] = [
  // qmail, Postfix text part, Yahoo:  "<kijitora@example.org>:"
  //   then "Remote host said: 550 5.1.1 <kijitora@example.org>... User Unknown"
  lead(new RegExp(String.raw`^\s*<([^\s<>]+@[^\s<>]+)>\s*:`)),
  // Exim, Gmail: the address alone on its line, often indented
  //   "  kijitora@example.jp" / "     userunknown@example.jp"
  // GMX: '"shironeko@example.jp":'
  // Sendmail-style text (Active!Hunter, V5 sendmail): ">>> kijitora@example.org <kijitora@example.org>"
  // X3: "   * kijitora@example.com"
  lead(new RegExp(String.raw`^\s*(?:>>>\s*|[*\u2022-]\s+)?"?${A}"?\s*:?\s*(?:<[^<>\s]+>)?\s*(?:\.{3}.*)?$`)),
  // Sendmail transcript: "554 <kijitora@example.edu>... Remote protocol error: Connection reset"
  lead(new RegExp(String.raw`^[45]\d\d <${A}>\.\.\.\s`), true, true),
  // Exim with routing detail: "  kijitora@example.jp (generated from neko@example.jp)"
  //   "  kijitora@example.jp <neko@example.jp>: ..."
  lead(new RegExp(String.raw`^\s{0,8}${A}\s*(?:\(generated from|\(expanded from|<[^>]+>:|:\s+\S)`)),
  // Exchange 2003: "kijitora@example.co.jp on Thu, 29 Apr 2007 16:51:51 -0500"
  lead(new RegExp(String.raw`^\s*${A}\s+on\s+\w{3},`)),
  // Notes, Domino, mail.ru and others: "Recipient: <kijitora@example.jp>"
  //   "Failed recipient: kijitora@example.jp", "Original-Recipient: rfc822;kijitora@example.jp"
  // (a bare "To:" is not one: Exchange quotes the original's To: above the failed recipients)
  lead(
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
    new RegExp(
      String.raw`(?:error delivering your (?:mail|message) to|undeliverable to|could not be delivered to:|returned (?:permanent |temporary )?errors?:|\bAddress:)\s*${A}`,
      'i',
    ),
  ),
  // fml: "Duplicated Message-ID in <neko@example.co.jp>."
  lead(new RegExp(String.raw`^Duplicated Message-ID in ${A}`, 'i')),
  // Lotus Notes: "Your message ... was not delivered to: kijitora@example.jp"
  lead(
    new RegExp(
      String.raw`(?:deliver(?:ing|ed)?|sen[dt]|message|mail|e-?mail) (?:\S+ ){0,4}to:?\s+${A}[.:,]?\s*(?:\(|$|was|is|has|could|failed|because|\.)`,
      'i',
    ),
    false,
  ),
  // ezweb, KDDI, Japanese carriers: "<kijitora@ezweb.ne.jp>" inside a sentence in the text,
  // and SMTP transcripts: "RCPT TO:<kijitora@example.jp>"
  lead(new RegExp(String.raw`RCPT TO:\s*${A}`, 'i')),
  // Zoho: "kijitora@example.co.jp Invalid Address, ERROR_CODE :550, ERROR_CODE :5.1.1 ..."
  lead(new RegExp(String.raw`^\s*${A}\s*[.:]?\s*\S.*$`), false),
  // IMail: "User mailbox exceeds allowed size: kijitora@example.co.jp"
  lead(new RegExp(String.raw`^[^:<>@]{3,80}:\s+${A}\s*$`), false),
];

/** Lines that begin the quoted original message in a one-part notice. */
export const ORIGINAL_MARKERS: readonly RegExp[] = [
  // qmail: "--- Below this line is a copy of the message."
  // Exim: "------ This is a copy of the message, including all the headers. ------"
  // Gmail: "----- Original message -----"   Courier: "--- Original message follows."
  /^[ \t]*[-=_*]{2,}.*(?:original|copy of (?:the|your) message|returned message|undelivered message|unsent message|message headers|headers of).*$/im,
  // DragonFly: "Message headers follow."   Exchange: "Original message headers:"
  /^[ \t]*(?:message headers follow|original message(?: headers)?(?: follows)?|below this line is a copy of the message|the original message headers|headers of the original message|unsent message below|returned message|the header of the original message)[.:]?[ \t]*$/im,
  // A header block at column 0: the quoted message started without a marker.
  /^(?:Return-Path|Received|DKIM-Signature|X-Received|ARC-Seal): /m,
  // A quoted part boundary left in a one-part notice.
  /^Content-Type: message\/rfc822/im,
];
