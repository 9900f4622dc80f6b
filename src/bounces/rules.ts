// Classifier rules as data. Each text rule is: pattern → reason, with above it a reply a real
// server sent that the rule was written for. The bounce type follows from the reason and the
// reply class (see REASONS). Rules are tried in order and the first match wins, so the more
// specific conditions ("mailbox full", "relay denied") come before the broad ones ("user
// unknown", "rejected"): a 5.1.1 reply that says the mailbox is full is about a full mailbox.

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

export interface TextRule {
  pattern: RegExp;
  reason: Reason;
}

const r = (pattern: RegExp, reason: Reason): TextRule => ({ pattern, reason });

export const TEXT_RULES: readonly TextRule[] = [
  // Google Groups: "We're writing to let you know that the group you tried to contact
  // (libsisimai) may not exist, or you may not have permission to post messages to the group."
  // Written in the sender's language, so the help-centre link is what identifies it.
  r(/groups\.google\.com\/support|you may not have permission to post/i, 'sender_rejected'),

  // NTT docomo takes every RCPT and answers after DATA, for a missing mailbox and for the
  // recipient's own sender filter alike: "550 Unknown user kijitora@docomo.ne.jp".
  r(/unknown user \S+@docomo\.ne\.jp/i, 'content_filtered'),

  // fml (mailing list manager): "Duplicated Message-ID in <neko@example.co.jp>." The list
  // refused a message it believes it has already seen: a loop, not a statement about anyone.
  r(/duplicated message-id/i, 'system_error'),

  // Exim (cPanel) when no host of the domain could be reached: "The mail server could not
  // deliver mail to x@example.net. The account or domain may not exist, they may be
  // blacklisted, or missing the proper dns entries."
  r(/the account or domain may not exist/i, 'host_unknown'),

  // Trend Micro InterScan: "Unable to deliver message to <x@example.jp> (and other recipients
  // in the same domain). Please check if address is correct."
  r(/please check if (?:the )?address is correct/i, 'user_unknown'),

  // Facebook: "Based on the email preferences of the person you're trying to email, this message could not be delivered."
  // AOL: "recipient is only accepting mail from specific email addresses"
  r(/email preferences of the person|refused due to recipient preferences|recipient is only accepting mail from specific|user refuses to receive|you have been blocked by the recipient|message rejected due to user rules|message filtered/i, 'content_filtered'),

  // KDDI au (ezweb.ne.jp) answers "550 : User unknown", with the address left out, when the
  // recipient's own domain filter refuses the sender; a mailbox that does not exist gets
  // "550 <kijitora@ezweb.ne.jp>: User unknown".
  // Relayed through Yahoo the same reply reads "550: : User unknown".
  r(/\b550:? : user unknown/i, 'content_filtered'),

  // Exchange Online directory-based edge blocking: the recipient is not in the tenant.
  // "550 5.4.1 [kijitora@example.org]: Recipient address rejected: Access denied"
  r(/recipient address rejected: access denied/i, 'user_unknown'),

  // GoDaddy: "550 5.2.0 <sironeko@example.com> From: Domain is invalid. Please provide a valid From"
  r(/from: domain is invalid|provide a valid from\b/i, 'sender_rejected'),

  // 452 4.3.1 Insufficient system storage
  r(/insufficient system storage|system (?:disk )?(?:is )?full|out of (?:disk )?space on|no space left/i, 'system_full'),

  // 552 5.2.2 <neko@example.org> Quota exceeded (mailbox for user is full)
  // 550 5.2.2 STOREDRV.Deliver: mailbox full. "MapiExceptionShutoffQuotaExceeded"
  // 522 5.2.0 Delivery failed: Over quota
  // x-unix; /var/email/kijitora/Maildir/tmp/...: Disk quota exceeded
  r(/mail ?box (?:is |was )?(?:full|over|exceed)|over ?quota|quota (?:exceeded|full)|exceeds? (?:the )?(?:storage |mailbox |disk )?(?:quota|allocation)|quotaexceeded|mailbox size limit|mail ?folder is full|user(?:'s)? (?:mail ?box|disk space)? ?(?:is )?(?:full|over)|recipient(?:'s)? mailbox is full|not enough (?:storage|space|disk)|insufficient (?:disk )?space|storage (?:quota|limit)/i, 'mailbox_full'),

  // 552 5.2.3 Message size exceeds fixed maximum message size (10485760)
  // 550 5.2.3 RESOLVER.RST.RecipSizeLimit; message too large for this recipient
  // 552 5.2.3 Message length exceeds limit set by recipient
  r(/message (?:size |length )?(?:is )?(?:too (?:large|big)|exceeds)|size (?:exceeds|limit)|exceeds? (?:the )?(?:fixed )?maximum (?:message )?size|too large for this recipient|recipsizelimit|mail size|message is larger than/i, 'message_too_large'),

  // 550-5.2.1 The email account that you tried to reach is disabled.
  // 554 delivery error: dd ... This account has been disabled or discontinued [#102].
  // 550 Mailbox is frozen. See http://mail.i.ua/err/3/
  // 525 5.7.13 Disabled recipient address
  // 550 5.7.1 <kijitora@example.com>: Recipient address rejected: User ... temporary locked.
  r(/account (?:that you tried to reach )?(?:has been |is |was )?(?:disabled|suspended|discontinued|inactive|locked|deactivated|blocked|frozen)|mail ?box (?:is |has been )?(?:disabled|frozen|inactive|suspended|not active|locked)|disabled (?:recipient|user|mailbox|account)|(?:user|recipient) (?:\S+ )?(?:is )?(?:suspended|inactive|disabled|temporar(?:y|ily) locked)|temporar(?:y|ily) (?:locked|disabled)|account expired/i, 'mailbox_disabled'),

  // 550 5.1.6 recipient no longer on server: kijitora@example.jp
  // 551 not our user
  r(/no longer on (?:this )?server|not our user|user not local|(?:address|mailbox|recipient) has (?:moved|changed)|has been moved/i, 'has_moved'),

  // 554 5.7.1 <kijitora@example.org>: Relay access denied
  // 501 ... 5.7.1 This system is not configured to relay mail from <a> to <b>
  r(/relay(?:ing)? (?:access )?(?:denied|not (?:permitted|allowed))|not (?:configured|allowed|permitted|authorized) to relay|unable to relay|we do not relay|relaying (?:mail )?(?:to \S+ )?(?:is )?(?:denied|prohibited|not allowed)|not a gateway|relay not permitted/i, 'relay_denied'),

  // 550-5.7.26 The MAIL FROM domain [email.example.jp] has an SPF record with a hard fail
  // 554 5.7.1 Your message was rejected due to libsisimai.org's DMARC policy.
  // 550 Bad SPF records for [example.org:192.0.2.2], see http://spf.pobox.com/
  // 550 5.7.509 Access denied, sending domain ... does not pass DMARC verification
  r(/\bspf\b|\bdkim\b|\bdmarc\b|sender policy framework|domainkeys|does not pass (?:dmarc|spf|dkim)|authentication checks? (?:failed|did not pass)|unauthenticated email/i, 'auth_failure'),

  // 550 5.7.1 Connections not accepted from servers without a valid sender domain. Fix reverse DNS
  // 450 4.7.1 Access denied. IP name lookup failed [192.0.2.222]
  // 550 domain [example.com] mismatches client ip 192.0.2.225.
  // 550-5.7.25 The IP address sending this message does not have a PTR record setup
  r(/reverse (?:dns|lookup|dns lookup)|\bptr\b|\brdns\b|ip name lookup failed|mismatches client ip|cannot find your (?:host ?name|reverse)|client host name (?:lookup|not)|no (?:reverse|host ?name) (?:for|found)|(?:hostname|host name) (?:does not|doesn't) match|unresolvable (?:client|host ?name)/i, 'no_ptr'),

  // 554 5.7.1 <e22-33.smtp-out.amazonses.com[192.0.2.127]>: Client host rejected: blocked using mail.neko.example.com
  // 521-5.7.1 Service unavailable; client [203.0.113.225] blocked using dnsbl.sorbs.net
  // 550 5.7.1 IP address blacklisted by recipient
  // 550 5.7.606 Access denied, banned sending IP [192.0.2.25].
  r(/blocked using|black ?list|block ?list|deny ?list|\brbl\b|dnsbl|spamhaus|spamcop|\bsorbs\b|client host (?:\[\S+\] )?(?:rejected|blocked)|banned sending ip|(?:ip|host|address) (?:address )?(?:\S+ )?(?:is |has been )?(?:listed|blocked|banned|blacklisted)|(?<!not )listed (?:in|on|at|by) (?:the )?\S*(?:bl|black|block|spam)|your (?:ip|network|server) (?:address )?(?:is|has been) (?:blocked|rejected|banned)|refused to talk to me|connection refused by|not accepting mail from (?:your|this) ip/i, 'ip_blocked'),

  // 550-5.7.1 ... likely suspicious due to the very low reputation of the sending IP address
  r(/reputation|sender score/i, 'bad_reputation'),

  // 550 Virus Detected; Content Rejected
  r(/virus|malware|infected|trojan|worm detected|phishing/i, 'virus_detected'),

  // 554 5.6.0 This message has been scored as spam with a probability of more than 90%
  // 550 5.7.1 Message content rejected, UBE, id=22220-02-222
  // 554 5.7.0 Reject, id=20025-09 - SPAM
  r(/spam|\bube\b|unsolicited|bulk (?:e-?)?mail|junk mail|content rejected|message content|surbl|uribl/i, 'spam_blocked'),

  // 553 5.1.8 <root@vagrant-centos65...>... Domain of sender address root@... does not exist
  // 501 5.1.8 Sender address rejected
  // 550 5.7.1 can't determine Purported Responsible Address
  r(/sender (?:address |domain )?(?:\S+ )?(?:rejected|denied|refused|blocked|invalid|not allowed|verify failed|unknown|is not allowed)|domain of sender|sender domain (?:does not|must|is)|sender address (?:does not|must)|purported responsible address|mail from (?:address |domain )?(?:rejected|denied|refused|not accepted)|envelope (?:sender|from) (?:rejected|denied|refused)|return.path (?:rejected|invalid)|unverified sender|sender verify failed|email address is not verified|not (?:a )?(?:verified|authorized|permitted) sender|rejected (?:the )?sender|invalid sender|bad sender/i, 'sender_rejected'),

  // 550 Unauthenticated senders not allowed
  // 530 5.7.0 Must issue a STARTTLS command first
  r(/unauthenticated senders?|authentication (?:is )?required|must (?:authenticate|issue a starttls)|not authenticated|tls (?:is )?required|encryption required|certificate/i, 'security_error'),

  // 550-5.7.1 Messages with multiple addresses in From: header are not accepted.
  // 554 Transaction failed: Duplicate header 'DKIM-Signature'.
  r(/multiple (?:\S+ )?addresses in from|duplicate header|not (?:rfc|standard)[ -]?(?:5322|2822|822)?[ -]?compliant|rfc ?(?:5322|2822|822) (?:violation|compliance|non-?compliant)|malformed (?:header|message)|(?:missing|invalid) (?:\S+ )?header|header (?:is )?(?:missing|invalid|malformed)|bare lf/i, 'not_rfc_compliant'),

  // 552 5.6.0 Headers too large (3 max)
  r(/headers? too (?:large|long|many)|mime (?:error|format)|8-?bit (?:data|characters?) (?:not|in)|illegal (?:content|character)/i, 'content_error'),

  // Postfix: "Name service error for domain example.com: Host not found, try again" is a
  // SERVFAIL or timeout, not NXDOMAIN: the domain may well exist.
  r(/host not found, try again|temporary (?:dns |name )?(?:lookup )?failure|name server (?:timeout|failure)|servfail/i, 'network_error'),

  // 550 5.4.4 Invalid domain
  // DragonFly: "DNS lookup failure: host cx.example.org not found"
  // X-Postfix; Host or domain name not found. Name service error for name=neko.example.jp
  // 554 The mail could not be delivered to the recipient because the domain is not reachable.
  r(/host or domain name not found|(?:host|domain)(?: name)? (?:\S+ )?not found|no such domain|unknown (?:host|domain)|domain (?:name )?(?:does not exist|doesn't exist|is not reachable|not reachable|is invalid)|invalid domain|unrouteable (?:mail )?domain|name service error|no mx (?:record|host)|host unknown|nxdomain|domain (?:could not|cannot) be resolved|unable to resolve|mx lookup failed|no (?:valid )?mail (?:exchanger|server) for/i, 'host_unknown'),

  // 550 Host does not accept mail
  r(/does not accept (?:e-?)?mail|accepts? no mail|null mx|not accepting (?:any )?(?:e-?)?mail|no mail service/i, 'not_accept'),

  // 550 5.1.1 <kijitora@example.jp>... User Unknown
  // 550 5.1.1 RESOLVER.ADR.RecipNotFound; not found
  // 550-5.1.1 The email account that you tried to reach does not exist.
  // 554 delivery error: dd This user doesn't have a yahoo.com account
  // 550 5.5.0 Adresse destinataire invalide. Invalid recipient.
  // 553 Invalid recipient kijitora@example.org (Mode: normal)
  r(/user ?unknown|unknown (?:user|recipient|address|mailbox|local[- ]?part|alias)|no such (?:user|mailbox|recipient|account|address|person|local user)|(?:user|mailbox|recipient|address|account|addressee) (?:\S+ )?(?:does not|doesn't|did not|not) exists?|(?:user|recipient|mailbox|address|account) (?:was |is )?not found|recipnotfound|recipientnotfound|invalid (?:recipient|mailbox|address|user)|not a valid (?:mailbox|user|recipient|address)|mailbox unavailable|mailbox not (?:available|found)|no mailbox|doesn't have an? \S+ account|addressee unknown|unrouteable address|bad destination (?:mailbox|address)|destinataire invalide|is not a known user|unknown or illegal|user not known|address (?:is )?(?:invalid|unknown|does not exist)|no such address|not listed in (?:the )?(?:public )?(?:name|address|recipient|directory)|recipient (?:address )?rejected: (?:undeliverable|unknown)|unknown recipient/i, 'user_unknown'),

  // 452 4.3.2 Connection rate limit exceeded.
  // 552 Too many recipients
  // 421 4.7.0 [192.0.2.1] Our system has detected an unusual rate of unsolicited mail (covered by spam above)
  r(/too many (?:connections|recipients|messages|concurrent|sessions|mails)|rate limit|rate (?:exceeded|of messages)|throttl|sending too fast|slow down|limit (?:exceeded|reached) (?:for|on)|exceeded (?:the )?(?:\S+ )?(?:connection|message|sending|recipient) limit/i, 'rate_limited'),

  // 450 4.2.0 <x@y>: Recipient address rejected: Greylisted, see http://postgrey.schweikert.ch/
  r(/gr[ae]y ?list|try again in \d+ (?:seconds|minutes)/i, 'greylisted'),

  // 554 4.4.7 Message expired: unable to deliver in 840 minutes.
  // 550 4.4.7 QUEUE.Expired; message expired
  // connect to example.org[203.0.113.225]:25: Connection timed out
  r(/expired|retry (?:time|timeout|period)|timed? ?out|unable to deliver in|could not be delivered (?:for|within)|giving up|gave up|too long in (?:the )?queue|delivery (?:time|period) (?:expired|exceeded)/i, 'expired'),

  // 554 5.4.6 Too many hops
  // lost connection with mx2.qq.com[184.105.206.86] while performing the HELO handshake
  // 550 5.4.312 Message expired, DNS query failed (covered by expired above)
  r(/lost connection|connection (?:refused|reset|closed|dropped|failed|lost)|network (?:error|unreachable|is unreachable)|routing loop|mail loop|loops? back to myself|too many hops|hop count|dns (?:query )?(?:failed|failure|error|timeout)|temporary lookup failure|could not connect|unable to connect|no route to host|host (?:is )?unreachable|malformed or unexpected name server reply/i, 'network_error'),

  // x-unix; procmail: Couldn't create "/var/spool/mail/neko"
  r(/procmail|mailer error|local delivery failed|command (?:died|failed)|pipe to \S+ failed|unknown mailer|maildrop|exit (?:code|status) \d+/i, 'mailer_error'),

  // 503 5.5.0 Bad sequence of commands / 500 Syntax error, command unrecognized
  r(/syntax error|command unrecognized|unrecognized command|bad sequence of commands|command not recognized/i, 'syntax_error'),

  // 554 5.7.9 Message not accepted for policy reasons.
  // 550 Denied by policy / 550 Protocol violation
  r(/policy|not allowed|prohibited|protocol violation|forbidden|not permitted/i, 'policy'),

  // 553 5.3.5 system config error / 554 Service currently unavailable / 554 Transaction failed
  r(/system (?:config(?:uration)? )?(?:error|failure|problem|unavailable)|internal (?:server )?error|service (?:is )?(?:currently |temporarily )?unavailable|local error|server error|transaction failed|mail system problem|config(?:uration)? error|resources? (?:temporarily )?unavailable|try again later|temporary (?:failure|problem|error)/i, 'system_error'),
];

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
  'X.7.27': { reason: 'not_accept' }, // sender address has null MX
  'X.7.509': { reason: 'auth_failure', decisive: true }, // Microsoft: DMARC failed
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
