import { describe, expect, it } from 'vitest';
import { parseReport, toParseOutput } from '../../src/bounces/index.ts';

const msg = (s: string) => Buffer.from(s.replace(/^\n/, '').replace(/\n/g, '\r\n'), 'utf8');

const DELAYED_DSN = msg(`
Return-Path: <>
From: MAILER-DAEMON@mx.example.net (Mail Delivery System)
To: b+abc@bounces.example.com
Subject: Delayed Mail (still being retried)
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="B1"

--B1
Content-Type: text/plain

This is the mail system at host mx.example.net.
Your message could not be delivered for 4 hours. It will be retried until it is 5 days old.

--B1
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.net

Final-Recipient: rfc822; Kijitora@example.org
Action: delayed
Status: 4.4.1
Remote-MTA: dns; mx.example.org
Diagnostic-Code: X-Postfix; connect to mx.example.org[192.0.2.1]:25: Connection timed out

--B1
Content-Type: text/rfc822-headers

From: news@example.com
To: Kijitora@example.org
Message-ID: <1.abc@example.com>
Subject: hello

--B1--
`);

const FAILED_DSN = msg(`
From: MAILER-DAEMON@mx.example.net
Subject: Undelivered Mail Returned to Sender
Content-Type: multipart/report; report-type=delivery-status; boundary="B2"

--B2
Content-Type: text/plain

<nobody@example.org>: host mx.example.org[192.0.2.1] said: 550 5.1.1
    <nobody@example.org>: Recipient address rejected: User unknown (in reply to RCPT TO command)

--B2
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.net

Final-Recipient: rfc822; nobody@example.org
Action: failed
Status: 5.1.1
Diagnostic-Code: smtp; 550 5.1.1 <nobody@example.org>: Recipient address rejected: User unknown

Final-Recipient: rfc822; ok@example.org
Action: delivered
Status: 2.0.0

--B2--
`);

const ARF = msg(`
From: fbl@isp.example
To: fbl@bounces.example.com
Subject: FW: hello
MIME-Version: 1.0
Content-Type: multipart/report; report-type=feedback-report; boundary="B3"

--B3
Content-Type: text/plain

This is an email abuse report.

--B3
Content-Type: message/feedback-report

Feedback-Type: abuse
User-Agent: ExampleFBL/1.0
Version: 1
Original-Mail-From: <b+abc@bounces.example.com>
Original-Rcpt-To: <user@isp.example>
Source-IP: 192.0.2.25
Reporting-MTA: dns; fbl.isp.example

--B3
Content-Type: message/rfc822

From: news@example.com
To: user@isp.example
Message-ID: <42.xyz@example.com>
Subject: hello

body
--B3--
`);

const VACATION = msg(`
Return-Path: <>
From: Kijitora <kijitora@example.org>
To: news@example.com
Subject: Automatic reply: hello
Auto-Submitted: auto-replied
Content-Type: text/plain

I'm out of the office until Monday.
`);

describe('parseReport: RFC 3464', () => {
  it('reads a delay notice as a transient, delayed recipient', async () => {
    const r = await parseReport(DELAYED_DSN);
    expect(r.kind).toBe('bounce');
    expect(r.reportingMta).toBe('mx.example.net');
    expect(r.originalMessageId).toBe('<1.abc@example.com>');
    expect(r.recipients).toEqual([
      expect.objectContaining({ address: 'Kijitora@example.org', action: 'delayed', status: '4.4.1', bounceType: 'transient', remoteMta: 'mx.example.org' }),
    ]);
  });

  it('lists failed recipients only, never the delivered ones', async () => {
    const r = await parseReport(FAILED_DSN);
    expect(r.recipients.map((x) => [x.address, x.status, x.smtpCode, x.bounceType, x.reason])).toEqual([
      ['nobody@example.org', '5.1.1', 550, 'permanent', 'user_unknown'],
    ]);
    expect(r.humanText).toContain('Recipient address rejected');
  });

  it('prints the SPEC §5 JSON shape', async () => {
    const out = toParseOutput('x.eml', await parseReport(FAILED_DSN));
    expect(out).toEqual({
      file: 'x.eml',
      kind: 'bounce',
      recipients: [
        {
          address: 'nobody@example.org',
          status: '5.1.1',
          smtp_code: 550,
          bounce_type: 'permanent',
          reason: 'user_unknown',
          diagnostic: '550 5.1.1 <nobody@example.org>: Recipient address rejected: User unknown',
        },
      ],
      feedback_type: null,
      original_message_id: null,
    });
  });
});

describe('parseReport: ARF', () => {
  it('reads feedback type, original Message-ID and recipient', async () => {
    const r = await parseReport(ARF);
    expect(r).toMatchObject({
      kind: 'complaint',
      feedbackType: 'abuse',
      originalMessageId: '<42.xyz@example.com>',
      userAgent: 'ExampleFBL/1.0',
      sourceIp: '192.0.2.25',
      reportingMta: 'fbl.isp.example',
    });
    expect(r.recipients.map((x) => [x.address, x.reason])).toEqual([['user@isp.example', 'complaint']]);
  });

  it('marks opt-out as an unsubscribe', async () => {
    const r = await parseReport(Buffer.from(ARF.toString('utf8').replace('Feedback-Type: abuse', 'Feedback-Type: Opt-Out')));
    expect(r.feedbackType).toBe('opt-out');
    expect(r.recipients[0]!.reason).toBe('unsubscribe');
  });
});

describe('parseReport: complaints whatever their layout', () => {
  const arf = ARF.toString('utf8');

  it('reads report-type and part types in any letter case and parameter order', async () => {
    const shuffled = arf
      .replace(
        'Content-Type: multipart/report; report-type=feedback-report; boundary="B3"',
        'Content-Type: Multipart/Report; boundary="B3"; Report-Type="Feedback-Report"',
      )
      .replace('Content-Type: message/feedback-report', 'Content-Type: Message/Feedback-Report');
    const r = await parseReport(Buffer.from(shuffled));
    expect(r).toMatchObject({ kind: 'complaint', feedbackType: 'abuse', originalMessageId: '<42.xyz@example.com>' });
    expect(r.recipients.map((x) => x.address)).toEqual(['user@isp.example']);
  });

  it('finds a feedback report nested anywhere in the tree, as a forwarding provider wraps it', async () => {
    const inner = arf.slice(arf.indexOf('Content-Type: multipart/report'));
    const wrapped =
      msg(`
From: abuse-desk@isp.example
To: fbl@bounces.example.com
Subject: Fwd: complaint
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="OUTER"

--OUTER
Content-Type: text/plain

Forwarded complaint below.

--OUTER
`).toString() +
      inner.replace(/\r?\n/g, '\r\n') +
      '\r\n--OUTER--\r\n';
    const r = await parseReport(Buffer.from(wrapped));
    expect(r).toMatchObject({ kind: 'complaint', feedbackType: 'abuse' });
    expect(r.recipients.map((x) => x.address)).toEqual(['user@isp.example']);
  });

  it('does not take an unsubscribe request a mail client sent by itself for an auto-reply', async () => {
    const request = msg(`
From: Reader <reader@example.org>
To: u+token@bounces.example.com
Subject: Unsubscribe
Auto-Submitted: auto-replied
X-Apple-Unsubscribe: true

This message was automatically generated by Mail.
`);
    expect((await parseReport(request)).kind).not.toBe('autoreply');
    const vacation = msg(`
From: Reader <reader@example.org>
To: u+token@bounces.example.com
Subject: Out of Office: Unsubscribe
Auto-Submitted: auto-replied

Away until Monday.
`);
    expect((await parseReport(vacation)).kind).toBe('autoreply');
  });
});

describe('parseReport: auto-replies and other mail', () => {
  it('recognises a vacation reply and reports no recipient', async () => {
    expect(await parseReport(VACATION)).toMatchObject({ kind: 'autoreply', recipients: [] });
  });

  it('leaves ordinary mail unknown', async () => {
    const r = await parseReport(msg('From: a@example.org\nTo: b@example.com\nSubject: hi\n\nhello b@example.com\n'));
    expect(r).toMatchObject({ kind: 'unknown', recipients: [] });
  });
});

describe('parseReport: garbage never throws', () => {
  const cases: [string, Buffer][] = [
    ['empty', Buffer.alloc(0)],
    ['binary blob', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256))],
    ['truncated DSN', FAILED_DSN.subarray(0, Math.floor(FAILED_DSN.length * 0.6))],
    ['DSN cut inside the headers', FAILED_DSN.subarray(0, 60)],
    ['broken boundary', Buffer.from(FAILED_DSN.toString('utf8').replace(/--B2/g, '--XX'))],
    ['boundary never declared', Buffer.from(FAILED_DSN.toString('utf8').replace('; boundary="B2"', ''))],
    ['nested boundary loop', msg('Content-Type: multipart/mixed; boundary=a\n\n--a\nContent-Type: multipart/mixed; boundary=a\n\n--a\n--a--\n')],
    ['invalid base64 and charset', msg('Content-Type: text/plain; charset=x-nonsense\nContent-Transfer-Encoding: base64\n\n!!!***\n')],
  ];
  for (const [name, raw] of cases) {
    it(name, async () => {
      const r = await parseReport(raw);
      expect(['bounce', 'unknown']).toContain(r.kind);
      for (const x of r.recipients) expect(x.address).toMatch(/@/);
    });
  }

  it('keeps the best effort from a truncated DSN', async () => {
    const cut = FAILED_DSN.subarray(0, FAILED_DSN.indexOf('Final-Recipient: rfc822; ok'));
    const r = await parseReport(cut);
    expect(r.kind).toBe('bounce');
    expect(r.recipients.map((x) => x.address)).toEqual(['nobody@example.org']);
  });
});
