// Classifier rules as data. Each text rule is: pattern → reason, with the replies real servers
// sent that the rule was written for kept beside it as data (`examples`), and tested. The bounce
// type follows from the reason and the reply class (see REASONS). Rules (text-rules.ts) are tried in order and the first match wins, so the more
// specific conditions ("mailbox full", "relay denied") come before the broad ones ("user
// unknown", "rejected"): a 5.1.1 reply that says the mailbox is full is about a full mailbox.

import type { SourceKey } from './sources.ts';
import type { BounceType } from './types.ts';

/** What each reason word means for the address, when the reply is permanent (class 5). */
export const REASONS = {
  // The address will never take mail: suppress it.
  user_unknown: 'permanent', // the mailbox does not exist
  host_unknown: 'permanent', // the domain does not exist or has no usable mail host
  has_moved: 'permanent', // the mailbox moved and mail is not forwarded (551)
  not_accept: 'permanent', // the domain accepts no mail at all (null MX, RFC 7505)
  mailbox_disabled: 'permanent', // the mailbox exists but is disabled or suspended
  // This message or sender was refused: do not suppress the address.
  spam_blocked: 'blocked', // the content was judged to be spam
  virus_detected: 'blocked', // the content was judged to carry malware
  content_filtered: 'blocked', // a recipient-side filter refused the content
  ip_blocked: 'blocked', // the sending IP or host is on a blocklist or refused
  bad_reputation: 'blocked', // the sending IP or domain has a poor reputation
  no_ptr: 'blocked', // the sending IP has no or a mismatching reverse DNS name
  auth_failure: 'blocked', // SPF, DKIM or DMARC failed
  sender_rejected: 'blocked', // the envelope sender address or domain was refused
  relay_denied: 'blocked', // the server would not relay to that recipient
  security_error: 'blocked', // authentication or TLS was required and missing
  policy: 'blocked', // a local policy of the destination refused the message
  not_rfc_compliant: 'blocked', // duplicate or malformed headers
  content_error: 'blocked', // the message format was refused
  message_too_large: 'blocked', // larger than the destination or the recipient accepts
  syntax_error: 'blocked', // the SMTP dialogue itself was refused
  // May work later.
  mailbox_full: 'transient', // the mailbox or its quota is full
  system_full: 'transient', // the destination's disk is full
  rate_limited: 'transient', // too fast, too many connections or recipients at once
  greylisted: 'transient', // greylisting: retry in a few minutes
  expired: 'transient', // the retry period ran out (delay notices, timeouts)
  network_error: 'transient', // DNS failure, lost connection, routing loop
  system_error: 'transient', // the destination system failed
  mailer_error: 'transient', // a local delivery program on the destination failed
  temporary_failure: 'transient', // a 4xx reply without a more specific cause
  undefined: 'transient', // a failure whose cause the text does not say
} as const satisfies Record<string, BounceType>;

export type Reason = keyof typeof REASONS;

/**
 * One wording of a text rule, with its evidence. `cites` names public documents (SOURCES) that
 * state this wording or its meaning; `seen` names the corpus families in which the wording
 * appears in a reply labelled with the rule's meaning (test/bounces/evidence.test.ts checks
 * each). The leave-one-family-out measurement scores a family only with the terms that have a
 * citation or were seen in another family.
 */
export interface Term {
  pattern: RegExp;
  cites: readonly SourceKey[];
  seen: readonly string[];
}

/**
 * One text rule: wordings → reason (and through REASONS, the bounce type), with the real
 * replies it was written for. `examples` are server replies as sent (anonymised, like the
 * corpus); the first is the one that motivated the rule. test/bounces/rules.test.ts runs every
 * example through classifyReply and expects this rule's reason and bounce type, and expects this
 * rule, not an earlier one, to be the first that matches: a reordering that shadows a rule fails.
 */
export interface TextRule {
  /** What the rule says, for `bounce explain` ("mailbox does not exist", "blocklist"). */
  signal: string;
  reason: Reason;
  examples: readonly [string, ...string[]];
  terms: readonly Term[];
  /** All terms as one case-insensitive pattern. */
  pattern: RegExp;
}
