import type { TextRule } from './reasons.ts';

// The text rules, most specific first; see reasons.ts for the format and why order matters.
export const TEXT_RULES: readonly TextRule[] = [
  // Provider tables first: a documented code says more than the words around it.
  {
    // Spectrum (Charter) writes its own "AUP#" code into every refusal; its published table
    // gives 1300-1340 for too many connections and 1350-1490, 1540-1580 for sending too much.
    // The words around the code are generic ("sender rejected"), so the code decides.
    examples: [
      '550 5.1.0 <0100017-cat-000000@amazonses.com> sender rejected. Please see https://www.spectrum.net/support/internet/understanding-email-error-codes for more information. AUP#In-1310',
    ],
    pattern: /\bAUP#(?:In?|O(?:ut)?)-1(?:3\d\d|4[0-8]\d|490|5[458]0)\b/i,
    reason: 'rate_limited',
    source: 'Spectrum, "Understanding email error codes" (spectrum.net/support/internet/understanding-email-error-codes)',
  },
  {
    // Outlook.com / Hotmail: SC-001..SC-004 and "messages from <IP> weren't sent" refuse the
    // sending IP (SC-004: too many unwanted messages from it; S3150: it is on their block list).
    examples: [
      "550 SC-004 (COL0-MC1-F1) Unfortunately, messages from 192.0.2.22 weren't sent. We recommend that you contact your Internet service provider. The problem is that too many unwanted messages have been sent from the following IP address above.",
      "550 5.7.1 Unfortunately, messages from [192.0.2.1] weren't sent. Please contact your Internet service provider since part of their network is on our block list (S3150).",
    ],
    pattern: /\bSC-00[1-4]\b|messages from \[?[\d.:a-f]+\]? weren't sent/i,
    reason: 'ip_blocked',
    source: 'Outlook.com postmaster, "Troubleshooting" (sendersupport.olc.protection.outlook.com/pm/troubleshooting.aspx)',
  },
  {
    // Google Groups: "We're writing to let you know that the group you tried to contact
    // (neko-nyaan) may not exist, or you may not have permission to post messages to the
    // group." Written in the sender's language, so the help-centre link identifies it too.
    examples: [
      "We're writing to let you know that the group you tried to contact (neko-nyaan) may not exist, or you may not have permission to post messages to the group. A few more details on why you weren't able to post: * You might have spelled or formatted the group name incorrectly. If you need more help or information, you can visit https://groups.google.com/support/",
    ],
    pattern: /groups\.google\.com\/support|you may not have permission to post/i,
    reason: 'sender_rejected',
  },
  {
    // Gmail refusing a "Send mail as" alias whose SMTP settings no longer work
    // (support.google.com/mail/?p=CustomFromDenied): the sender, not the recipient.
    examples: [
      "** Message not delivered ** You're sending this from a different address or alias using the 'Send mail as' feature. The settings for your 'Send mail as' account are misconfigured or out of date. Check those settings and try resending. Learn more here: https://support.google.com/mail/?p=CustomFromDenied",
    ],
    pattern: /'send mail as' (?:feature|account)|customfromdenied/i,
    reason: 'sender_rejected',
    source: 'Gmail Help, "Send emails from a different address or alias" (support.google.com/mail/?p=CustomFromDenied)',
  },
  {
    // fml (mailing list manager) refuses a message whose Message-ID it has already seen:
    // a loop, not a statement about anyone. fml's own fixed text, for every list it runs.
    examples: ['Duplicated Message-ID in <neko@example.co.jp>.'],
    pattern: /duplicated message-id/i,
    reason: 'system_error',
    source: 'fml 4/8 source: the duplicate Message-ID check of the distribution filter (fml.org)',
  },
  {
    // cPanel's Exim when no host of the domain could be reached: cPanel's fixed text.
    examples: [
      'The mail server could not deliver mail to kijitora@example.net. The account or domain may not exist, they may be blacklisted, or missing the proper dns entries.',
    ],
    pattern: /the account or domain may not exist/i,
    reason: 'host_unknown',
    source: "cPanel's Exim configuration (the fixed bounce text of cPanel & WHM servers)",
  },
  {
    // Trend Micro InterScan Messaging Security: its fixed notice text.
    examples: ['Unable to deliver message to <kijitora@example.jp> (and other recipients in the same domain). Please check if address is correct.'],
    pattern: /please check if (?:the )?address is correct/i,
    reason: 'user_unknown',
    source: 'Trend Micro InterScan Messaging Security Suite, delivery failure notification template',
  },
  {
    // The recipient's own settings refused the sender: Facebook, AOL and the "message
    // filtered" replies of hosted filters.
    examples: [
      "This message was created automatically by Facebook. Based on the email preferences of the person you're trying to email, this message could not be delivered.",
      '550 5.2.0 Message Filtered',
    ],
    pattern: /email preferences of the person|refused due to recipient preferences|recipient is only accepting mail from specific|user refuses to receive|you have been blocked by the recipient|message rejected due to user rules|message filtered/i,
    reason: 'content_filtered',
  },
  {
    // KDDI au (ezweb.ne.jp) answers "550 : User unknown", with the address left out, when the
    // recipient's own domain filter refuses the sender; a mailbox that does not exist gets
    // "550 <kijitora@ezweb.ne.jp>: User unknown". Relayed through Yahoo: "550: : User unknown".
    examples: ['550 : User unknown', '<kijitora@ezweb.ne.jp>: 550: : User unknown'],
    pattern: /\b550:? : user unknown/i,
    reason: 'content_filtered',
  },
  {
    // Exchange Online directory-based edge blocking: the recipient is not in the tenant.
    examples: [
      '550 5.4.1 [kijitora@example.org]: Recipient address rejected: Access denied [NEKOCHAN.cat-JPN22.prod.protection.outlook.com]',
      '550 5.4.1 Recipient address rejected: Access denied. AS(201806281) [DM6NAM12FT035.eop-nam12.prod.protection.outlook.com]',
    ],
    pattern: /recipient address rejected: access denied/i,
    reason: 'user_unknown',
    source: 'Microsoft Learn, "Fix NDR error 550 5.4.1 in Exchange Online"',
  },
  {
    // GoDaddy (secureserver.net) refusing a From: domain that does not resolve.
    examples: ['550 5.2.0 <sironeko@example.com> From: Domain is invalid. Please provide a valid From'],
    pattern: /from: domain is invalid|provide a valid from\b/i,
    reason: 'sender_rejected',
    source: 'GoDaddy Help, "What do SMTP error codes mean?" (secureserver.net bounce texts)',
  },
  {
    examples: ['452 4.3.1 Insufficient system storage'],
    pattern: /insufficient system storage|system (?:disk )?(?:is )?full|out of (?:disk )?space on|no space left/i,
    reason: 'system_full',
  },
  {
    examples: [
      '552 5.2.2 <neko@example.org> Quota exceeded (mailbox for user is full)',
      '550 5.2.2 STOREDRV.Deliver: mailbox full. The following information should help identify the cause: "MapiExceptionShutoffQuotaExceeded"',
      '522 5.2.0 Delivery failed: Over quota',
      'x-unix; /var/email/kijitora/Maildir/tmp/1000000000.A000000B00000.neko22.example.jp:Disk quota exceeded',
      "452-4.2.2 The email account that you tried to reach is over quota. Please direct the recipient to https://support.google.com/mail/?p=OverQuotaTemp",
    ],
    pattern: /mail ?box (?:is |was )?(?:full|over|exceed)|over ?quota|quota (?:exceeded|full)|exceeds? (?:the )?(?:storage |mailbox |disk )?(?:quota|allocation)|quotaexceeded|mailbox size limit|mail ?folder is full|user(?:'s)? (?:mail ?box|disk space)? ?(?:is )?(?:full|over)|recipient(?:'s)? mailbox is full|not enough (?:storage|space|disk)|insufficient (?:disk )?space|storage (?:quota|limit)/i,
    reason: 'mailbox_full',
  },
  {
    examples: [
      '552 5.2.3 Message size exceeds fixed maximum message size (10485760)',
      '550 5.2.3 RESOLVER.RST.RecipSizeLimit; message too large for this recipient',
      '552 5.2.3 Message length exceeds limit set by recipient',
      "552-5.2.3 Your message exceeded Google's message size limits. Please visit https://support.google.com/mail/?p=MaxSizeError to view our size guidelines.",
    ],
    pattern: /message (?:size |length )?(?:is )?(?:too (?:large|big)|exceeds)|size (?:exceeds|limit)|exceeds? (?:the )?(?:fixed )?maximum (?:message )?size|too large for this recipient|recipsizelimit|mail size|message is larger than/i,
    reason: 'message_too_large',
  },
  {
    examples: [
      '550-5.2.1 The email account that you tried to reach is disabled.',
      '554 delivery error: dd This account has been disabled or discontinued [#102].',
      '550 Mailbox is frozen. See http://mail.i.ua/err/3/',
      '525 5.7.13 Disabled recipient address',
      '550 5.7.1 <kijitora@example.com>: Recipient address rejected: User kijitora temporary locked.',
    ],
    pattern: /account (?:that you tried to reach )?(?:has been |is |was )?(?:disabled|suspended|discontinued|inactive|locked|deactivated|blocked|frozen)|mail ?box (?:is |has been )?(?:disabled|frozen|inactive|suspended|not active|locked)|disabled (?:recipient|user|mailbox|account)|(?:user|recipient) (?:\S+ )?(?:is )?(?:suspended|inactive|disabled|temporar(?:y|ily) locked)|temporar(?:y|ily) (?:locked|disabled)|account expired/i,
    reason: 'mailbox_disabled',
  },
  {
    examples: ['550 5.1.6 recipient no longer on server: kijitora@example.jp', '551 not our user'],
    pattern: /no longer on (?:this )?server|not our user|user not local|(?:address|mailbox|recipient) has (?:moved|changed)|has been moved/i,
    reason: 'has_moved',
  },
  {
    examples: [
      '554 5.7.1 <kijitora@example.org>: Relay access denied',
      '550 5.7.1 Unable to relay for kijitora@example.net',
      '501 5.7.1 This system is not configured to relay mail from <neko@example.jp> to <kijitora@example.org> for 192.0.2.1',
    ],
    pattern: /relay(?:ing)? (?:access )?(?:denied|not (?:permitted|allowed))|not (?:configured|allowed|permitted|authorized) to relay|unable to relay|we do not relay|relaying (?:mail )?(?:to \S+ )?(?:is )?(?:denied|prohibited|not allowed)|not a gateway|relay not permitted/i,
    reason: 'relay_denied',
  },
  {
    // Before the authentication and spam rules: "Duplicate header 'DKIM-Signature'" names a
    // header, not a DKIM failure, and Gmail's RFC 5322 refusal also mentions spam.
    examples: [
      '550-5.7.1 Messages with multiple addresses in From: header are not accepted.',
      "554 Transaction failed: Duplicate header 'DKIM-Signature'.",
      '550-5.7.1 [192.0.2.1] Our system has detected that this message is not RFC 5322 compliant. To reduce the amount of spam sent to Gmail, this message has been blocked. Please review RFC 5322 specifications for more information.',
    ],
    pattern: /multiple (?:\S+ )?addresses in from|duplicate header|not (?:rfc|standard)[ -]?(?:5322|2822|822)?[ -]?compliant|rfc ?(?:5322|2822|822) (?:violation|compliance|non-?compliant)|malformed (?:header|message)|(?:missing|invalid) (?:\S+ )?header|header (?:is )?(?:missing|invalid|malformed)|bare lf/i,
    reason: 'not_rfc_compliant',
  },
  {
    examples: [
      '550-5.7.26 The MAIL FROM domain [email.example.jp] has an SPF record with a hard fail policy (-all) but it fails to pass SPF checks with the ip: [192.0.2.22].',
      "554 5.7.1 Your message was rejected due to example.org's DMARC policy.",
      '550 Bad SPF records for [example.org:192.0.2.2], see http://spf.pobox.com/',
      '550 5.7.509 Access denied, sending domain [EXAMPLE.JP] does not pass DMARC verification and has a DMARC policy of reject.',
    ],
    pattern: /\bspf\b|\bdkim\b|\bdmarc\b|sender policy framework|domainkeys|does not pass (?:dmarc|spf|dkim)|authentication checks? (?:failed|did not pass)|unauthenticated email/i,
    reason: 'auth_failure',
  },
  {
    examples: [
      '550 5.7.1 Connections not accepted from servers without a valid sender domain. Fix reverse DNS for 192.0.2.1',
      '450 4.7.1 Client host rejected: cannot find your hostname, [192.0.2.222]',
      '550 domain [example.com] mismatches client ip 192.0.2.225.',
      '550-5.7.25 [192.0.2.22] The IP address sending this message does not have a PTR record setup, or the corresponding forward DNS entry does not point to the sending IP.',
    ],
    pattern: /reverse (?:dns|lookup|dns lookup)|\bptr\b|\brdns\b|ip name lookup failed|mismatches client ip|cannot find your (?:host ?name|reverse)|client host name (?:lookup|not)|no (?:reverse|host ?name) (?:for|found)|(?:hostname|host name) (?:does not|doesn't) match|unresolvable (?:client|host ?name)/i,
    reason: 'no_ptr',
  },
  {
    examples: [
      '554 5.7.1 <e22-33.smtp-out.amazonses.com[192.0.2.127]>: Client host rejected: blocked using mail.neko.example.com',
      '521-5.7.1 Service unavailable; client [203.0.113.225] blocked using dnsbl.sorbs.net',
      '550 5.7.1 IP address blacklisted by recipient',
      '550 5.7.606 Access denied, banned sending IP [192.0.2.25].',
      '550 5.7.708 Service unavailable. Access denied, traffic not accepted from this IP.',
      '553 5.7.2 [TSS09] All messages from 192.0.2.1 will be permanently deferred; Retrying will NOT succeed. See https://postmaster.yahooinc.com/error-codes',
      "550-5.7.1 [192.0.2.1] The IP you're using to send mail is not authorized to send email directly to our servers. Please use the SMTP relay at your service provider instead.",
    ],
    pattern: /blocked using|black ?list|block ?list|deny ?list|\brbl\b|dnsbl|spamhaus|spamcop|\bsorbs\b|client host (?:\[\S+\] )?(?:rejected|blocked)|banned sending ip|(?:ip|host|address) (?:address )?(?:\S+ )?(?:is |has been )?(?:listed|blocked|banned|blacklisted)|(?<!not )listed (?:in|on|at|by) (?:the )?\S*(?:bl|black|block|spam)|your (?:ip|network|server) (?:address )?(?:is|has been) (?:blocked|rejected|banned)|refused to talk to me|connection refused by|not accepting mail from (?:your|this) ip|traffic not accepted from this ip|will be permanently deferred|not authorized to send email directly to our servers/i,
    reason: 'ip_blocked',
  },
  {
    examples: [
      '550-5.7.1 [192.0.2.1] Our system has detected that this message is likely suspicious due to the very low reputation of the sending IP address.',
      '421 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1; see https://postmaster.yahooinc.com/error-codes',
    ],
    pattern: /reputation|sender score|user complaints/i,
    reason: 'bad_reputation',
    source: 'Google Workspace Admin Help, "SMTP error reference" (support.google.com/a/answer/3726730); Yahoo Sender Hub, "SMTP error codes"',
  },
  {
    examples: ['550 Virus Detected; Content Rejected'],
    pattern: /virus|malware|infected|trojan|worm detected|phishing/i,
    reason: 'virus_detected',
  },
  {
    examples: [
      '554 5.6.0 This message has been scored as spam with a probability of more than 90%',
      '550 5.7.1 Message content rejected, UBE, id=22220-02-222',
      '554 5.7.0 Reject, id=20025-09 - SPAM',
      "550-5.7.1 [192.0.2.1] Our system has detected that this message is likely unsolicited mail. To reduce the amount of spam sent to Gmail, this message has been blocked.",
    ],
    pattern: /spam|\bube\b|unsolicited|bulk (?:e-?)?mail|junk mail|content rejected|message content|surbl|uribl/i,
    reason: 'spam_blocked',
  },
  {
    examples: [
      '553 5.1.8 <root@vagrant-centos65.example.com>... Domain of sender address root@vagrant-centos65.example.com does not exist',
      '501 5.1.8 Sender address rejected',
      "550 5.7.1 can't determine Purported Responsible Address",
      '550 5.1.0 <neko@example.jp> sender rejected',
      '550-Verification failed for <neko@example.jp>\n550-Unrouteable address\n550 Sender verify failed',
    ],
    pattern: /sender (?:address |domain )?(?:\S+ )?(?:rejected|denied|refused|blocked|invalid|not allowed|verify failed|unknown|is not allowed)|domain of sender|sender domain (?:does not|must|is)|sender address (?:does not|must)|purported responsible address|mail from (?:address |domain )?(?:rejected|denied|refused|not accepted)|envelope (?:sender|from) (?:rejected|denied|refused)|return.path (?:rejected|invalid)|unverified sender|sender verify failed|email address is not verified|not (?:a )?(?:verified|authorized|permitted) sender|rejected (?:the )?sender|invalid sender|bad sender/i,
    reason: 'sender_rejected',
  },
  {
    examples: [
      '550 Unauthenticated senders not allowed',
      '530 5.7.0 Must issue a STARTTLS command first.',
      '550 5.7.57 SMTP; Client was not authenticated to send anonymous mail during MAIL FROM',
    ],
    pattern: /unauthenticated senders?|authentication (?:is )?required|must (?:authenticate|issue a starttls)|not authenticated|tls (?:is )?required|encryption required|certificate/i,
    reason: 'security_error',
  },
  {
    examples: [
      '552 5.6.0 Headers too large (32768 max)',
      '550 5.6.211 Invalid MIME Content: Single text value size (32768) exceeded',
    ],
    pattern: /headers? too (?:large|long|many)|mime (?:error|format)|invalid mime content|8-?bit (?:data|characters?) (?:not|in)|illegal (?:content|character)/i,
    reason: 'content_error',
    source: 'Sendmail (MaxHeadersLength, "Headers too large"); Microsoft Learn, NDR 5.6.211 "Invalid MIME Content"',
  },
  {
    // Postfix: "Host not found, try again" is a SERVFAIL or timeout, not NXDOMAIN: the domain
    // may well exist.
    examples: ['Name service error for name=example.com type=MX: Host not found, try again'],
    pattern: /host not found, try again|temporary (?:dns |name )?(?:lookup )?failure|name server (?:timeout|failure)|servfail/i,
    reason: 'network_error',
  },
  {
    examples: [
      '550 5.4.4 Invalid domain',
      'DNS lookup failure: host cx.example.org not found',
      'Host or domain name not found. Name service error for name=neko.example.jp type=AAAA: Host not found',
      '554 The mail could not be delivered to the recipient because the domain is not reachable. Please check the domain and try again',
      'Unrouteable mail domain "example.net"',
    ],
    pattern: /host or domain name not found|(?:host|domain)(?: name)? (?:\S+ )?not found|no such domain|unknown (?:host|domain)|domain (?:name )?(?:does not exist|doesn't exist|is not reachable|not reachable|is invalid)|invalid domain|unrouteable (?:mail )?domain|name service error|no mx (?:record|host)|host unknown|nxdomain|domain (?:could not|cannot) be resolved|unable to resolve|mx lookup failed|no (?:valid )?mail (?:exchanger|server) for/i,
    reason: 'host_unknown',
  },
  {
    examples: ['550 Host does not accept mail', '556 5.1.10 <kijitora@example.org>: Recipient address rejected: Domain example.org does not accept mail (nullMX)'],
    pattern: /does not accept (?:e-?)?mail|accepts? no mail|null mx|not accepting (?:any )?(?:e-?)?mail|no mail service/i,
    reason: 'not_accept',
  },
  {
    examples: [
      '550 5.1.1 <kijitora@example.jp>... User Unknown',
      '550 5.1.1 <x@example.com>: Recipient address rejected: User unknown in virtual mailbox table',
      '550 5.1.1 RESOLVER.ADR.RecipNotFound; not found',
      '550-5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient\'s email address for typos or unnecessary spaces.',
      "554 delivery error: dd This user doesn't have a yahoo.com account (kijitora@yahoo.com) [0] - mta1011.mail.ne1.yahoo.com",
      '550 5.5.0 Adresse destinataire invalide. Invalid recipient. LPN007_416',
      '553 Invalid recipient kijitora@example.org (Mode: normal)',
      '550 Requested action not taken: mailbox unavailable',
      '552 1 Requested mail action aborted, mailbox not found',
    ],
    pattern: /user ?unknown|unknown (?:user|recipient|address|mailbox|local[- ]?part|alias)|no such (?:user|mailbox|recipient|account|address|person|local user)|(?:user|mailbox|recipient|address|account|addressee) (?:\S+ )?(?:does not|doesn't|did not|not) exists?|(?:user|recipient|mailbox|address|account) (?:was |is )?not found|recipnotfound|recipientnotfound|invalid (?:recipient|mailbox|address|user)|not a valid (?:mailbox|user|recipient|address)|mailbox unavailable|mailbox not (?:available|found)|no mailbox|doesn't have an? \S+ account|tried to reach does not exist|addressee unknown|unrouteable address|bad destination (?:mailbox|address)|destinataire invalide|is not a known user|unknown or illegal|user not known|address (?:is )?(?:invalid|unknown|does not exist)|no such address|not listed in (?:the )?(?:public )?(?:name|address|recipient|directory)|recipient (?:address )?rejected: (?:undeliverable|unknown)|unknown recipient/i,
    reason: 'user_unknown',
  },
  {
    examples: ['452 4.3.2 Connection rate limit exceeded.', '452 4.5.3 Too many recipients'],
    pattern: /too many (?:connections|recipients|messages|concurrent|sessions|mails)|rate limit|rate (?:exceeded|of messages)|throttl|sending too fast|slow down|limit (?:exceeded|reached) (?:for|on)|exceeded (?:the )?(?:\S+ )?(?:connection|message|sending|recipient) limit/i,
    reason: 'rate_limited',
  },
  {
    examples: ['450 4.2.0 <x@example.com>: Recipient address rejected: Greylisted, see http://postgrey.schweikert.ch/help/example.com.html', '451 4.7.1 Greylisting in action, please come back in 00:05:00'],
    pattern: /gr[ae]y ?list|try again in \d+ (?:seconds|minutes)/i,
    reason: 'greylisted',
  },
  {
    examples: [
      '554 4.4.7 Message expired: unable to deliver in 840 minutes.<421 4.4.2 Connection timed out>',
      '550 4.4.7 QUEUE.Expired; message expired',
      'connect to example.org[203.0.113.225]:25: Connection timed out',
      'retry timeout exceeded',
    ],
    pattern: /expired|retry (?:time|timeout|period)|timed? ?out|unable to deliver in|could not be delivered (?:for|within)|giving up|gave up|too long in (?:the )?queue|delivery (?:time|period) (?:expired|exceeded)/i,
    reason: 'expired',
  },
  {
    examples: [
      '554 5.4.6 Too many hops',
      'lost connection with mx2.example.com[192.0.2.86] while performing the HELO handshake',
      '554 <kijitora@example.edu>... Remote protocol error: Connection reset by peer during result wait with example.edu',
    ],
    pattern: /lost connection|connection (?:refused|reset|closed|dropped|failed|lost)|network (?:error|unreachable|is unreachable)|routing loop|mail loop|loops? back to myself|too many hops|hop count|dns (?:query )?(?:failed|failure|error|timeout)|temporary lookup failure|could not connect|unable to connect|no route to host|host (?:is )?unreachable|malformed or unexpected name server reply/i,
    reason: 'network_error',
  },
  {
    examples: ['procmail: Couldn\'t create "/var/spool/mail/neko"', 'Command died with status 75: "/usr/bin/procmail"'],
    pattern: /procmail|mailer error|local delivery failed|command (?:died|failed)|pipe to \S+ failed|unknown mailer|maildrop|exit (?:code|status) \d+/i,
    reason: 'mailer_error',
    source: 'Postfix local(8): "Command died with status N" for a delivery command such as procmail',
  },
  {
    examples: ['503 Bad sequence of commands', '500 5.5.2 Error: command not recognized'],
    pattern: /syntax error|command unrecognized|unrecognized command|bad sequence of commands|command not recognized/i,
    reason: 'syntax_error',
  },
  {
    examples: [
      '554 5.7.9 Message not accepted for policy reasons. See https://help.yahoo.com/kb/postmaster/SLN7253.html',
      '550 Denied by policy',
      '550 Administrative prohibition',
      '550 Protocol violation',
    ],
    pattern: /policy|not allowed|prohibited|administrative prohibition|protocol violation|forbidden|not permitted/i,
    reason: 'policy',
  },
  {
    examples: [
      '553 5.3.5 system config error',
      '554 Service currently unavailable',
      '554 Transaction failed',
    ],
    pattern: /system (?:config(?:uration)? )?(?:error|failure|problem|unavailable)|internal (?:server )?error|service (?:is )?(?:currently |temporarily )?unavailable|local error|server error|transaction failed|mail system problem|config(?:uration)? error|resources? (?:temporarily )?unavailable|try again later|temporar(?:y|ily) (?:failure|problem|error)/i,
    reason: 'system_error',
  },
];
