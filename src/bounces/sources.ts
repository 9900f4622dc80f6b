// The public documents the classifier's rules rest on. A rule's term cites these by key; the
// leave-one-family-out measurement keeps a cited term for every family, since its evidence is
// not a corpus file (test/bounces/scoring.ts). Cite a source only when it states that wording,
// or that meaning for that code, itself.

export const SOURCES = {
  rfc3463: 'RFC 3463, Enhanced Mail System Status Codes (rfc-editor.org/rfc/rfc3463)',
  rfc3464: 'RFC 3464, An Extensible Message Format for Delivery Status Notifications',
  rfc5321: 'RFC 5321 §4.2, SMTP replies (rfc-editor.org/rfc/rfc5321)',
  rfc5965: 'RFC 5965, An Extensible Format for Email Feedback Reports (ARF)',
  rfc7372: 'RFC 7372, Email Authentication Status Codes',
  rfc7504: 'RFC 7504, SMTP 521 and 556 Reply Codes',
  rfc7505: 'RFC 7505, A "Null MX" No Service Resource Record',
  rfc2369: 'RFC 2369, The Use of URLs as Meta-Syntax for Core Mail List Commands (List-Unsubscribe)',
  rfc3834: 'RFC 3834, Recommendations for Automatic Responses to Electronic Mail',
  sisimai: "Sisimai's bounce reasons and the word lists behind them (libsisimai.org/en/reason; go-sisimai reason/why-*.go)",
  gmail: 'Google Workspace Admin Help, "Gmail SMTP errors and codes" (support.google.com/a/answer/3726730)',
  gmailhelp: 'Gmail Help articles linked from its replies (support.google.com/mail/?p=...)',
  microsoft:
    'Microsoft Learn, "Email non-delivery reports and SMTP errors in Exchange Online" (learn.microsoft.com/exchange/mail-flow-best-practices/non-delivery-reports-in-exchange-online/)',
  outlookcom: 'Outlook.com postmaster, "Troubleshooting" (sendersupport.olc.protection.outlook.com/pm/troubleshooting.aspx)',
  yahoo: 'Yahoo Sender Hub, "SMTP error codes" (senders.yahooinc.com/smtp-error-codes/)',
  postfix: "Postfix's own reply and bounce texts (postfix.org: postconf(5), smtpd(8), local(8), bounce(5))",
  exim: "The Exim specification's routing and retry texts (exim.org/docs.html)",
  sendmail: "Sendmail's own texts (sendmail.org: op.me, the 'Host unknown' / 'User unknown' DSNs)",
  qmail: "qmail's texts (cr.yp.to/qmail: qmail-remote, qmail-local, 'Sorry, no mailbox here by that name')",
  spectrum: 'Spectrum, "Understanding email error codes" (spectrum.net/support/internet/understanding-email-error-codes)',
  godaddy: 'GoDaddy Help, "What do SMTP error codes mean?" (secureserver.net bounce texts)',
  cpanel: "cPanel & WHM's Exim configuration (its fixed bounce texts)",
  trendmicro: 'Trend Micro InterScan Messaging Security Suite, delivery failure notification template',
  fml: 'fml 4/8 source: the duplicate Message-ID check of the distribution filter (fml.org)',
  apple: 'Apple Mail: the unsubscribe request it mails to a List-Unsubscribe mailto address (X-Apple-Unsubscribe)',
} as const;

export type SourceKey = keyof typeof SOURCES;
