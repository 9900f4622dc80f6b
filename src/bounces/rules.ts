// Status-code and reply-code rules; the reason words live in reasons.ts, the text rules in
// text-rules.ts.
import type { Reason } from './reasons.ts';

export { REASONS, type Reason, type Term, type TextRule } from './reasons.ts';
export { TEXT_RULES } from './text-rules.ts';

/**
 * Enhanced status codes (RFC 3463, RFC 7372, RFC 7505 and providers' extensions) and what they
 * mean. `decisive` codes say one precise thing and win over the text; the others are only used
 * when no text rule matched (5.7.1 "delivery not authorized" covers spam, blocklists and policy
 * alike, so the text has to say which).
 */
export const STATUS_RULES: Readonly<Record<string, { reason: Reason; decisive?: boolean }>> = {
  'X.1.0': { reason: 'user_unknown' },
  'X.1.1': { reason: 'user_unknown' }, // bad destination mailbox address
  'X.1.2': { reason: 'host_unknown' }, // bad destination system address
  'X.1.3': { reason: 'user_unknown' }, // bad destination mailbox address syntax
  'X.1.4': { reason: 'user_unknown' }, // destination mailbox address ambiguous
  'X.1.5': { reason: 'user_unknown' },
  'X.1.6': { reason: 'has_moved', decisive: true }, // destination mailbox has moved, no forwarding
  'X.1.7': { reason: 'sender_rejected', decisive: true }, // bad sender's mailbox address syntax
  'X.1.8': { reason: 'sender_rejected', decisive: true }, // bad sender's system address
  'X.1.10': { reason: 'not_accept' }, // recipient address has null MX (RFC 7505)
  'X.2.0': { reason: 'content_filtered' }, // other or undefined mailbox status
  'X.2.1': { reason: 'mailbox_disabled' }, // mailbox disabled, not accepting messages
  'X.2.2': { reason: 'mailbox_full', decisive: true }, // mailbox full
  'X.2.3': { reason: 'message_too_large', decisive: true }, // message length exceeds administrative limit
  'X.2.4': { reason: 'system_error' }, // mailing list expansion problem
  'X.3.0': { reason: 'system_error' },
  'X.3.1': { reason: 'system_full', decisive: true }, // mail system full
  'X.3.2': { reason: 'not_accept' }, // system not accepting network messages
  'X.3.3': { reason: 'content_error' }, // system not capable of selected features
  'X.3.4': { reason: 'message_too_large', decisive: true }, // message too big for system
  'X.3.5': { reason: 'system_error' }, // system incorrectly configured
  'X.4.0': { reason: 'network_error' },
  'X.4.1': { reason: 'network_error' }, // no answer from host
  'X.4.2': { reason: 'network_error' }, // bad connection
  'X.4.3': { reason: 'system_error' }, // directory server failure
  'X.4.4': { reason: 'host_unknown' }, // unable to route
  'X.4.5': { reason: 'rate_limited' }, // mail system congestion
  'X.4.6': { reason: 'network_error', decisive: true }, // routing loop detected
  'X.4.7': { reason: 'expired', decisive: true }, // delivery time expired
  'X.5.0': { reason: 'policy' },
  'X.5.1': { reason: 'syntax_error' },
  'X.5.2': { reason: 'syntax_error' },
  'X.5.3': { reason: 'rate_limited' }, // too many recipients
  'X.5.4': { reason: 'syntax_error' },
  'X.5.5': { reason: 'syntax_error' },
  'X.6.0': { reason: 'content_error' },
  'X.6.1': { reason: 'content_error' },
  'X.7.0': { reason: 'security_error' },
  'X.7.1': { reason: 'policy' }, // delivery not authorized, message refused
  'X.7.7': { reason: 'security_error' },
  'X.7.9': { reason: 'policy' },
  'X.7.13': { reason: 'mailbox_disabled', decisive: true }, // user account disabled (RFC 7372)
  'X.7.14': { reason: 'security_error' },
  'X.7.20': { reason: 'auth_failure', decisive: true }, // no passing DKIM signature (RFC 7372)
  'X.7.21': { reason: 'auth_failure', decisive: true },
  'X.7.22': { reason: 'auth_failure', decisive: true },
  'X.7.23': { reason: 'auth_failure', decisive: true }, // SPF validation failed
  'X.7.24': { reason: 'auth_failure', decisive: true }, // SPF validation error
  'X.7.25': { reason: 'no_ptr', decisive: true }, // reverse DNS validation failed
  'X.7.26': { reason: 'auth_failure', decisive: true }, // multiple authentication checks failed
  // RFC 7505 §4.2: it is our envelope sender's domain that has a null MX, not the recipient's:
  // the recipient is fine, so this must not suppress it.
  'X.7.27': { reason: 'sender_rejected', decisive: true }, // sender address has null MX
  'X.7.29': { reason: 'auth_failure', decisive: true }, // ARC validation failure (RFC 8617 §5.2.1)
  'X.7.509': { reason: 'auth_failure', decisive: true }, // Microsoft: DMARC failed
  // Microsoft's high-volume sender requirements (2025): SPF, DKIM and DMARC must pass and align.
  'X.7.515': { reason: 'auth_failure', decisive: true }, // Microsoft: required authentication level not met
  'X.7.606': { reason: 'ip_blocked', decisive: true }, // Microsoft: banned sending IP
};

/** Reply codes (RFC 5321 §4.2.3) used when neither an enhanced code nor the text decides. */
export const REPLY_RULES: Readonly<Record<number, Reason>> = {
  421: 'temporary_failure', // service not available, closing channel
  450: 'temporary_failure', // mailbox unavailable (busy, greylisted)
  451: 'system_error', // local error in processing
  452: 'system_full', // insufficient system storage
  500: 'syntax_error',
  501: 'syntax_error',
  502: 'syntax_error',
  503: 'syntax_error',
  504: 'syntax_error',
  521: 'not_accept', // host does not accept mail (RFC 7504)
  550: 'undefined', // mailbox unavailable: the text must say why
  551: 'has_moved', // user not local
  552: 'mailbox_full', // exceeded storage allocation
  553: 'user_unknown', // mailbox name not allowed
  554: 'undefined', // transaction failed
  556: 'not_accept', // domain does not accept mail (RFC 7504)
};
