// The general vocabularies of the classifier: what a diagnostic says about the mailbox, the
// sender or the message, whichever MTA wrote it. Each term: [/wording/, cited sources, corpus
// families it was seen in with that meaning] (rule-data.ts). Sources: RFC 3463 and RFC 5321 for
// the texts they define; Sisimai's reason word lists; the published error pages of Gmail,
// Microsoft, Outlook.com and Yahoo; Postfix, Exim, Sendmail and qmail for their own texts.

import type { TextRule } from './reasons.ts';
import { rule } from './rule-data.ts';

export const MAILBOX_STATE_RULES: readonly TextRule[] = [
  rule({
    signal: 'destination disk full',
    reason: 'system_full',
    examples: ['452 4.3.1 Insufficient system storage'],
    terms: [
      [/insufficient system storage/, 'rfc5321', ''],
      [/system (?:disk )?(?:is )?full/, 'rfc3463', ''],
      [/out of (?:disk )?space on/, '', ''],
      [/no space left/, 'sisimai', ''],
    ],
  }),
  rule({
    signal: 'mailbox full / over quota',
    reason: 'mailbox_full',
    examples: [
      '552 5.2.2 <neko@example.org> Quota exceeded (mailbox for user is full)',
      '550 5.2.2 STOREDRV.Deliver: mailbox full. The following information should help identify the cause: "MapiExceptionShutoffQuotaExceeded"',
      '522 5.2.0 Delivery failed: Over quota',
      'x-unix; /var/email/kijitora/Maildir/tmp/1000000000.A000000B00000.neko22.example.jp:Disk quota exceeded',
      '452-4.2.2 The email account that you tried to reach is over quota. Please direct the recipient to https://support.google.com/mail/?p=OverQuotaTemp',
    ],
    terms: [
      [
        /mail ?box (?:is |was )?(?:full|over|exceed)/,
        'rfc3463 sisimai',
        'lhost-amazonworkmail lhost-dragonfly lhost-exchange2007 lhost-exim lhost-gmail lhost-gmx lhost-imailserver lhost-kddi lhost-mailru lhost-opensmtpd lhost-outlook lhost-qmail lhost-receivingses lhost-yahoo rhost-aol rhost-outlook',
      ],
      [/over ?quota/, 'sisimai gmail', 'lhost-mailfoundry lhost-messagingserver lhost-sendmail lhost-x2 lhost-x3'],
      [/quota (?:exceeded|full|violation)/, 'sisimai', 'lhost-postfix'],
      [/exceeds? (?:the )?(?:storage |mailbox |disk )?(?:quota|allocation)|exceeded storage allocation/, 'rfc5321 sisimai', ''],
      [/quotaexceeded/, 'microsoft', 'lhost-exchange2007'],
      [/mailbox size limit|mailbox exceeds allowed size|would exceed maximum allowed storage/, 'sisimai', 'lhost-imailserver'],
      [/mail ?folder is full|full mailbox/, 'sisimai', ''],
      [/user(?:'s)? (?:mail ?box|disk space)? ?(?:is )?(?:full|over)|space has been used up/, 'sisimai', 'lhost-postfix'],
      [/recipient(?:'s)? mailbox is full/, 'sisimai', 'lhost-exchange2007'],
      [/not (?:sufficient|enough) (?:storage|space|disk)/, 'sisimai', 'rfc3464'],
      [/insufficient (?:disk )?space/, 'sisimai', ''],
      [/storage (?:quota|limit)|disk quota/, 'sisimai', 'lhost-postfix'],
      [/too many messages on the server|boite du destinataire pleine/, 'sisimai', ''],
    ],
  }),
  rule({
    signal: 'message too large',
    reason: 'message_too_large',
    examples: [
      '552 5.2.3 Message size exceeds fixed maximum message size (10485760)',
      '550 5.2.3 RESOLVER.RST.RecipSizeLimit; message too large for this recipient',
      '552 5.2.3 Message length exceeds limit set by recipient',
      "552-5.2.3 Your message exceeded Google's message size limits. Please visit https://support.google.com/mail/?p=MaxSizeError to view our size guidelines.",
    ],
    terms: [
      [/message (?:size |length )?(?:is )?(?:too (?:large|big)|exceeds)/, 'rfc3463', 'lhost-dragonfly lhost-exchange2007 lhost-receivingses lhost-sendmail'],
      [/size (?:exceeds|limit)/, 'gmail postfix', 'lhost-einsundeins lhost-sendmail'],
      [/exceeds? (?:the )?(?:fixed )?maximum (?:message )?size/, 'postfix', 'lhost-sendmail'],
      [/too large for this recipient|recipsizelimit/, 'microsoft', 'lhost-exchange2007'],
      [/mail size/, '', 'lhost-einsundeins'],
      [/message is larger than/, '', ''],
    ],
  }),
  rule({
    signal: 'mailbox disabled or suspended',
    reason: 'mailbox_disabled',
    examples: [
      '550-5.2.1 The email account that you tried to reach is disabled.',
      '554 delivery error: dd This account has been disabled or discontinued [#102].',
      '550 Mailbox is frozen. See http://mail.i.ua/err/3/',
      '525 5.7.13 Disabled recipient address',
      '550 5.7.1 <kijitora@example.com>: Recipient address rejected: User kijitora temporary locked.',
      '550 5.5.0 Le compte du destinataire est bloque. The recipient account is blocked. LPN007_426',
    ],
    terms: [
      [
        /account (?:that you tried to reach )?(?:has been |is |was )?(?:disabled|suspended|discontinued|inactive|locked|deactivated|frozen)/,
        'gmail sisimai',
        'lhost-amazonses lhost-dragonfly lhost-ezweb lhost-postfix lhost-qmail rhost-google',
      ],
      [/mail ?box (?:is |has been |currently )?(?:disabled|frozen|inactive|suspended|not active|locked)/, 'sisimai', 'lhost-postfix rhost-iua'],
      [/disabled (?:recipient|user|mailbox|account)/, 'rfc7372', 'lhost-sendmail'],
      [/(?:user|recipient) (?:\S+ )?(?:is )?(?:suspended|inactive|disabled|temporar(?:y|ily) locked)/, 'sisimai', 'lhost-amazonses lhost-dragonfly'],
      [/temporar(?:y|ily) (?:locked|disabled)/, 'sisimai', 'lhost-amazonses'],
      [/inactive (?:account|user)|deactivated mailbox|user is terminated|archived recipient|is currently suspended|has been suspended/, 'sisimai', ''],
      [/account expired/, '', ''],
      [/(?:recipient|user|mailbox)(?:'s)? account (?:is |has been )?blocked|compte du destinataire est bloque/, '', 'rhost-franceptt'],
      [/no longer accepts mail/, 'sisimai', ''],
    ],
  }),
  rule({
    signal: 'mailbox moved',
    reason: 'has_moved',
    examples: ['550 5.1.6 recipient no longer on server: kijitora@example.jp', '551 not our user'],
    terms: [
      [/no longer on (?:this )?server/, '', 'rfc3464 rhost-apple'],
      [/not our user/, '', 'lhost-sendmail'],
      [/user not local/, 'rfc5321', ''],
      [/(?:address|mailbox|recipient) has (?:moved|changed)|has been moved/, 'rfc3463', 'lhost-dragonfly'],
    ],
  }),
];

export const NOT_FOUND_RULES: readonly TextRule[] = [
  rule({
    // Postfix: "Host not found, try again" is a SERVFAIL or timeout, not NXDOMAIN.
    signal: 'DNS lookup failed temporarily',
    reason: 'network_error',
    examples: ['Name service error for name=example.com type=MX: Host not found, try again'],
    terms: [
      [/host not found, try again/, 'postfix sisimai', 'lhost-postfix'],
      [/temporary (?:dns |name )?(?:lookup )?failure/, 'postfix', 'lhost-opensmtpd'],
      [/name server (?:timeout|failure)|servfail/, '', ''],
    ],
  }),
  rule({
    signal: 'domain does not exist',
    reason: 'host_unknown',
    examples: [
      '550 5.4.4 Invalid domain',
      'DNS lookup failure: host cx.example.org not found',
      'Host or domain name not found. Name service error for name=neko.example.jp type=AAAA: Host not found',
      '554 The mail could not be delivered to the recipient because the domain is not reachable. Please check the domain and try again',
      'Unrouteable mail domain "example.net"',
    ],
    terms: [
      [/host or domain name not found/, 'postfix sisimai', 'lhost-postfix rhost-aol'],
      [/(?:host|domain)(?: name)? (?:\S+ )?not found/, 'postfix', 'lhost-dragonfly lhost-postfix lhost-sendmail rhost-aol'],
      [/no such domain/, 'sisimai', 'lhost-courier'],
      [/unknown (?:host|domain)/, 'sisimai', ''],
      [
        /domain (?:name )?(?:does not exist|doesn't exist|is not reachable|not reachable|is invalid|must exist)/,
        'sisimai',
        'lhost-opensmtpd lhost-outlook rhost-outlook',
      ],
      [/invalid domain/, '', 'lhost-amazonses'],
      [/unrouteable (?:mail )?domain/, 'exim', ''],
      [/name service error/, 'postfix', 'lhost-postfix rhost-aol'],
      [/no mx host/, '', ''],
      [/host unknown/, 'sendmail sisimai', 'lhost-sendmail lhost-v5sendmail'],
      [/nxdomain|name or service not known/, 'sisimai', ''],
      [/domain (?:could not|cannot) be resolved|unable to resolve|mx lookup failed|no (?:valid )?mail (?:exchanger|server) for/, '', ''],
    ],
  }),
  rule({
    signal: 'domain accepts no mail',
    reason: 'not_accept',
    examples: [
      '550 Host does not accept mail',
      'No mx record found for domain=example.org',
      '556 5.1.10 <kijitora@example.org>: Recipient address rejected: Domain example.org does not accept mail (nullMX)',
    ],
    terms: [
      [/does not accept (?:e-?)?mail/, 'rfc7504 sisimai', 'lhost-messagingserver lhost-sendmail'],
      [/accepts? no mail/, '', ''],
      [/null ?mx/, 'rfc7505', 'rfc3464 rhost-gsuite'],
      [/not accepting (?:any )?(?:e-?)?mail|no mail service/, '', ''],
      [/mail receiving disabled/, 'sisimai', ''],
      [/no mx record/, 'sisimai', 'lhost-yahoo'],
    ],
  }),
  rule({
    signal: 'mailbox does not exist',
    reason: 'user_unknown',
    examples: [
      '550 5.1.1 <kijitora@example.jp>... User Unknown',
      '550 5.1.1 <x@example.com>: Recipient address rejected: User unknown in virtual mailbox table',
      '550 5.1.1 RESOLVER.ADR.RecipNotFound; not found',
      "550-5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient's email address for typos or unnecessary spaces.",
      "554 delivery error: dd This user doesn't have a yahoo.com account (kijitora@yahoo.com) [0] - mta1011.mail.ne1.yahoo.com",
      '550 5.5.0 Adresse destinataire invalide. Invalid recipient. LPN007_416',
      '553 Invalid recipient kijitora@example.org (Mode: normal)',
      '550 Requested action not taken: mailbox unavailable',
      '552 1 Requested mail action aborted, mailbox not found',
      '550 Sorry, no mailbox here by that name. (#5.1.1)',
    ],
    terms: [
      [
        /user ?unknown|user not known/,
        'sisimai postfix sendmail',
        'lhost-amavis lhost-amazonses lhost-amazonworkmail lhost-dragonfly lhost-exim lhost-ezweb lhost-gmail lhost-gmx lhost-mailmarshal lhost-mailru lhost-mcafee lhost-messagingserver lhost-mfilter lhost-mxlogic lhost-office365 lhost-opensmtpd lhost-postfix lhost-powermta lhost-qmail lhost-sendgrid lhost-sendmail lhost-trendmicro lhost-v5sendmail lhost-x5 lhost-yahoo lhost-yandex lhost-zoho rfc3464 rhost-aol rhost-gsuite rhost-outlook',
      ],
      [
        /unknown (?:user|recipient|address|mailbox|local[- ]?part|alias|e-?mail address)/,
        'sisimai',
        'lhost-exchange2003 lhost-office365 lhost-postfix lhost-sendmail rfc3464',
      ],
      [/no such (?:user|mailbox|recipient|account|address|person|local user)/, 'sisimai', 'lhost-v5sendmail lhost-verizon lhost-x3 rhost-messagelabs'],
      [/(?:user|mailbox|recipient|address|account|addressee) (?:\S+ )?(?:does not|doesn't|did not|not) exists?/, 'sisimai', 'lhost-receivingses'],
      [/(?:user|recipient|mailbox|address|account) (?:was |is )?not found/, 'sisimai', 'lhost-office365 lhost-postfix lhost-v5sendmail'],
      [/recipnotfound|recipientnotfound/, 'microsoft', 'lhost-exchange2007 lhost-office365'],
      [/invalid (?:recipient|mailbox|address|user)/, 'sisimai', 'lhost-bigfoot lhost-sendmail lhost-verizon lhost-zoho rhost-franceptt'],
      [/not a valid (?:mailbox|user|recipient|address)/, 'sisimai', ''],
      [/mailbox (?:is )?unavailable|mailbox not (?:available|found|present)/, 'rfc5321 sisimai', 'lhost-office365 lhost-sendmail lhost-v5sendmail'],
      [/no mailbox|no account by that name/, 'qmail sisimai', 'lhost-activehunter lhost-qmail'],
      [/doesn't have an? \S+ account/, 'yahoo sisimai', 'lhost-powermta lhost-sendmail rhost-yahooinc'],
      [/tried to reach does not exist/, 'gmail sisimai', 'lhost-postfix'],
      [/addressee unknown/, '', ''],
      [/unrouteable address/, 'exim', 'lhost-mailru'],
      [/bad destination (?:mailbox|address)/, 'rfc3463', 'lhost-dragonfly'],
      [/destinataire invalide|utilisateur inconnu/, 'sisimai', 'lhost-sendmail rhost-franceptt'],
      [/is not a known user/, 'sisimai', ''],
      [/unknown or illegal/, '', 'lhost-exim'],
      [/address (?:is )?(?:invalid|unknown|does not exist)/, 'sisimai', ''],
      [/not listed in (?:the )?(?:public )?(?:name|address|recipient|directory)|not present in directory/, 'sisimai', 'lhost-notes'],
      [/recipient (?:address )?rejected: (?:undeliverable|unknown|invalid)/, 'sisimai', ''],
      [/there is no one at this address|is not an active address|non-?existent user|no longer valid/, 'sisimai', ''],
      [/badrcptto|validrcptto/, 'qmail sisimai', ''],
    ],
  }),
];

export const TRANSIENT_RULES: readonly TextRule[] = [
  rule({
    signal: 'rate limit / too many connections',
    reason: 'rate_limited',
    examples: [
      '452 4.3.2 Connection rate limit exceeded.',
      '452 4.5.3 Too many recipients',
      '450-4.2.1 The user you are trying to contact is receiving mail too quickly. Please resend your message at a later time.',
    ],
    terms: [
      [/too many (?:connections|recipients|messages|concurrent|sessions|mails|errors from your ip)/, 'sisimai', 'lhost-postfix'],
      [/rate limit|throttl/, 'sisimai', 'lhost-postfix'],
      [/rate (?:exceeded|of messages)|receiving mail (?:too quickly|at a rate)/, 'gmail', ''],
      [/sending too fast|slow down/, '', ''],
      [/limit (?:exceeded|reached) (?:for|on)|exceeded (?:the )?(?:\S+ )?(?:connection|message|sending|recipient) limit/, 'sisimai', ''],
    ],
  }),
  rule({
    signal: 'greylisting',
    reason: 'greylisted',
    examples: [
      '450 4.2.0 <x@example.com>: Recipient address rejected: Greylisted, see http://postgrey.schweikert.ch/help/example.com.html',
      '451 4.7.1 Greylisting in action, please come back in 00:05:00',
    ],
    terms: [[/gr[ae]y ?list|try again in \d+ (?:seconds|minutes)/, '', '']],
  }),
  rule({
    signal: 'retry period expired / timeout',
    reason: 'expired',
    examples: [
      '554 4.4.7 Message expired: unable to deliver in 840 minutes.<421 4.4.2 Connection timed out>',
      '550 4.4.7 QUEUE.Expired; message expired',
      'connect to example.org[203.0.113.225]:25: Connection timed out',
      'retry timeout exceeded',
    ],
    terms: [
      [/expired/, 'rfc3463 sisimai', 'lhost-amazonses lhost-amazonworkmail lhost-exchange2007 lhost-office365 lhost-opensmtpd'],
      [/retry (?:time|timeout|period)/, 'exim sisimai', 'lhost-exim lhost-mailru'],
      [
        /timed? ?out/,
        'sisimai',
        'lhost-amazonses lhost-amazonworkmail lhost-exim lhost-mailru lhost-messagingserver lhost-postfix lhost-v5sendmail lhost-x2 lhost-yandex rfc3464',
      ],
      [/unable to deliver in/, '', 'lhost-amazonses lhost-amazonworkmail'],
      [/could not be delivered (?:for|within)/, 'sisimai', 'lhost-sendmail'],
      [/giving up|gave up/, 'sisimai', 'lhost-dragonfly lhost-qmail lhost-yahoo'],
      [/too long in (?:the )?queue|in the queue too long/, 'sisimai', 'lhost-x2'],
      [/delivery (?:time|period) (?:expired|exceeded)/, 'rfc3463', ''],
    ],
  }),
  rule({
    signal: 'network error / mail loop',
    reason: 'network_error',
    examples: [
      '554 5.4.6 Too many hops',
      'lost connection with mx2.example.com[192.0.2.86] while performing the HELO handshake',
      '554 <kijitora@example.edu>... Remote protocol error: Connection reset by peer during result wait with example.edu',
    ],
    terms: [
      [/lost connection/, 'postfix', 'lhost-postfix'],
      [/connection (?:refused|reset|closed|dropped|failed|lost)/, '', ''],
      [/network (?:error|unreachable|is unreachable)/, '', 'lhost-opensmtpd'],
      [/routing loop|mail loop|forwarding loop/, 'rfc3463 sisimai', 'lhost-domino lhost-x6'],
      [/loops? back to myself/, 'postfix sisimai', ''],
      [/too many hops|hop count/, 'sisimai sendmail', 'lhost-domino lhost-sendmail lhost-x6'],
      [/dns (?:query )?(?:failed|failure|error|timeout)/, '', 'lhost-office365 rfc3464 rhost-gsuite'],
      [/temporary lookup failure/, 'postfix', ''],
      [/could not connect|unable to connect/, 'sisimai', 'lhost-x2'],
      [/no route to host|host (?:is )?unreachable/, 'sisimai', 'rfc3464'],
      [/malformed or unexpected name server reply/, 'postfix sisimai', ''],
    ],
  }),
  rule({
    signal: 'local delivery program failed',
    reason: 'mailer_error',
    examples: ['procmail: Couldn\'t create "/var/spool/mail/neko"', 'Command died with status 75: "/usr/bin/procmail"'],
    terms: [
      [/procmail|maildrop/, '', 'lhost-postfix lhost-sendmail rfc3464'],
      [/mailer error|local delivery failed|unknown mailer/, '', ''],
      [/command (?:died|failed)|pipe to \S+ failed|exit (?:code|status) \d+/, 'postfix', ''],
    ],
  }),
  rule({
    signal: 'SMTP syntax error',
    reason: 'syntax_error',
    examples: ['503 Bad sequence of commands', '500 5.5.2 Error: command not recognized'],
    terms: [[/syntax error|command unrecognized|unrecognized command|bad sequence of commands|command not recognized/, 'rfc5321', '']],
  }),
];

export const GENERIC_RULES: readonly TextRule[] = [
  rule({
    signal: 'refused by policy',
    reason: 'policy',
    examples: [
      '554 5.7.9 Message not accepted for policy reasons. See https://help.yahoo.com/kb/postmaster/SLN7253.html',
      '550 Denied by policy',
      '550 Administrative prohibition',
      '550 Protocol violation',
    ],
    terms: [
      [/policy/, 'sisimai yahoo', 'lhost-dragonfly lhost-postfix lhost-qmail rhost-apple rhost-google rhost-microsoft rhost-yahooinc'],
      [/not allowed|prohibited|forbidden|not permitted/, '', 'lhost-postfix lhost-sendmail rhost-messagelabs'],
      [/administrative prohibition/, 'exim sisimai', ''],
      [/protocol violation/, 'sisimai', 'lhost-postfix'],
    ],
  }),
  rule({
    signal: 'destination system error',
    reason: 'system_error',
    examples: ['553 5.3.5 system config error', '554 Service currently unavailable', '554 Transaction failed'],
    terms: [
      [/system (?:config(?:uration)? )?(?:error|failure|problem|unavailable)/, 'sisimai', 'lhost-dragonfly'],
      [/internal (?:server )?error|server error/, 'sisimai', ''],
      [/service (?:is )?(?:currently |temporarily )?unavailable/, 'sisimai', 'lhost-surfcontrol rfc3464'],
      [/local error|transaction failed/, 'rfc5321 sisimai', 'lhost-postfix'],
      [/mail system problem|config(?:uration)? error/, 'sisimai', ''],
      [/resources? (?:temporarily )?unavailable/, '', ''],
      [/try again later|temporar(?:y|ily) (?:failure|problem|error)/, 'gmail', 'lhost-opensmtpd'],
    ],
  }),
];
