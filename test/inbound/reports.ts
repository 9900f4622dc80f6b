/** Reports as real MTAs and feedback loops write them, built around our message's details. */

export interface DsnOptions {
  /** The envelope recipient the report is mailed to (our VERP sender). */
  to: string;
  recipient: string;
  action?: 'failed' | 'delayed' | 'delivered';
  status?: string;
  diagnostic?: string;
  reportingMta?: string;
  remoteMta?: string;
  originalMessageId?: string;
  originalRecipient?: string;
}

/** A Postfix-style RFC 3464 report (multipart/report; report-type=delivery-status). */
export function dsn(o: DsnOptions): string {
  const action = o.action ?? 'failed';
  const status = o.status ?? '5.1.1';
  const diagnostic = o.diagnostic ?? `550 5.1.1 <${o.recipient}>: Recipient address rejected: User unknown in virtual mailbox table`;
  const reporting = o.reportingMta ?? 'mx.example.org';
  return `Return-Path: <>
Received: by mx.example.org (Postfix) id 3F1A2C0001; Sat, 21 Nov 2026 10:00:05 +0000 (UTC)
Date: Sat, 21 Nov 2026 10:00:05 +0000 (UTC)
From: MAILER-DAEMON@mx.example.org (Mail Delivery System)
Subject: Undelivered Mail Returned to Sender
To: ${o.to}
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status;
\tboundary="3F1A2C0001.1763719205/mx.example.org"
Message-Id: <20261121100005.3F1A2C0001@mx.example.org>

This is a MIME-encapsulated message.

--3F1A2C0001.1763719205/mx.example.org
Content-Description: Notification
Content-Type: text/plain; charset=us-ascii

This is the mail system at host mx.example.org.

I'm sorry to have to inform you that your message could not
be delivered to one or more recipients.

<${o.recipient}>: host mail.example.org[192.0.2.10] said: ${diagnostic}

--3F1A2C0001.1763719205/mx.example.org
Content-Description: Delivery report
Content-Type: message/delivery-status

Reporting-MTA: dns; ${reporting}
X-Postfix-Queue-ID: 3F1A2C0001
Arrival-Date: Sat, 21 Nov 2026 10:00:01 +0000 (UTC)

Final-Recipient: rfc822; ${o.recipient}
${o.originalRecipient ? `Original-Recipient: rfc822; ${o.originalRecipient}\n` : ''}Action: ${action}
Status: ${status}
Remote-MTA: dns; ${o.remoteMta ?? 'mail.example.org'}
Diagnostic-Code: smtp; ${diagnostic}

--3F1A2C0001.1763719205/mx.example.org
Content-Description: Undelivered Message Headers
Content-Type: text/rfc822-headers

Return-Path: <${o.to}>
From: News <news@acme.test>
To: ${o.recipient}
Subject: Hello
${o.originalMessageId ? `Message-ID: ${o.originalMessageId}\n` : ''}
--3F1A2C0001.1763719205/mx.example.org--
`;
}

export interface ArfOptions {
  feedbackType: string;
  recipient?: string;
  originalMessageId?: string;
  /** Return-Path of the quoted original (our VERP sender). */
  returnPath?: string;
  reportingMta?: string;
}

/** An RFC 5965 feedback report as a mailbox provider's feedback loop sends it. */
export function arf(o: ArfOptions): string {
  return `Return-Path: <fbl-bounces@isp.example>
From: Feedback Loop <fbl@isp.example>
To: fbl@bounces.mailsvc.test
Subject: FW: Hello
Date: Sat, 21 Nov 2026 11:00:00 +0000
Message-ID: <fbl.777@isp.example>
MIME-Version: 1.0
Content-Type: multipart/report; report-type=feedback-report; boundary="ARF-BOUNDARY"

--ARF-BOUNDARY
Content-Type: text/plain; charset=us-ascii

This is an email abuse report for an email message received from IP 192.0.2.25 on Sat, 21 Nov 2026 10:00:01 +0000.

--ARF-BOUNDARY
Content-Type: message/feedback-report

Feedback-Type: ${o.feedbackType}
User-Agent: ExampleFBL/1.0
Version: 1
Original-Mail-From: <${o.returnPath ?? 'b+x@bounces.mailsvc.test'}>
${o.recipient ? `Original-Rcpt-To: <${o.recipient}>\n` : ''}Arrival-Date: Sat, 21 Nov 2026 10:00:01 +0000
Reporting-MTA: dns; ${o.reportingMta ?? 'fbl.isp.example'}
Source-IP: 192.0.2.25

--ARF-BOUNDARY
Content-Type: message/rfc822

${o.returnPath ? `Return-Path: <${o.returnPath}>\n` : ''}From: News <news@acme.test>
${o.recipient ? `To: ${o.recipient}\n` : ''}Subject: Hello
${o.originalMessageId ? `Message-ID: ${o.originalMessageId}\n` : ''}Date: Sat, 21 Nov 2026 10:00:00 +0000

Hi there
--ARF-BOUNDARY--
`;
}

/** An RFC 3834 vacation reply. */
export function vacation(to: string): string {
  return `From: Kim <kim@example.org>
To: ${to}
Subject: Automatic reply: Hello
Auto-Submitted: auto-replied
Date: Sat, 21 Nov 2026 10:01:00 +0000

I am out of the office until Monday.
`;
}
