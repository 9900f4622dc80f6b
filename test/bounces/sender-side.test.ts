import { describe, expect, it } from 'vitest';
import { classifyReply, senderSideWarning } from '../../src/bounces/index.ts';

// Real replies (addresses and IPs anonymised) that say the sender, not the recipient, is at fault.
const CASES: [string, string, string][] = [
  [
    "550-5.7.26 Unauthenticated email from example.jp is not accepted due to domain's DMARC policy. Please contact the administrator of example.jp domain if this was a legitimate mail.",
    'auth_failure',
    'sender_authentication',
  ],
  [
    '550-5.7.26 This mail has been blocked because the sender is unauthenticated. Gmail requires all senders to authenticate with either SPF or DKIM.',
    'auth_failure',
    'sender_authentication',
  ],
  [
    "550 5.7.515 Access denied, sending domain [EXAMPLE.JP] doesn't meet the required authentication level. The sender's domain in the 5322.From address doesn't meet the authentication requirements defined for the sender.",
    'auth_failure',
    'sender_authentication',
  ],
  ['550 5.7.29 ARC validation failure', 'auth_failure', 'sender_authentication'],
  [
    '550-5.7.25 [192.0.2.22] The IP address sending this message does not have a PTR record setup, or the corresponding forward DNS entry does not point to the sending IP.',
    'no_ptr',
    'sender_reverse_dns',
  ],
  ['550 5.7.27 Sender address has null MX', 'sender_rejected', 'sender_null_mx'],
];

describe('sender-side refusals', () => {
  it.each(CASES)('%s → blocked, %s, warning %s', (text, reason, code) => {
    const c = classifyReply({ smtpCode: 550, text });
    expect(c).toMatchObject({ bounceType: 'blocked', reason });
    expect(senderSideWarning(c)?.code).toBe(code);
  });

  it('a reply about the recipient or the content raises none', () => {
    for (const text of ['550 5.1.1 User unknown', '554 5.7.1 Message rejected as spam', '552 5.2.2 Mailbox full']) {
      expect(senderSideWarning(classifyReply({ smtpCode: Number(text.slice(0, 3)), text }))).toBeNull();
    }
  });
});
