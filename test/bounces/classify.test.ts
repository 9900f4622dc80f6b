import { describe, expect, it } from 'vitest';
import { classifyReply } from '../../src/bounces/index.ts';

// Each case is a reply a real server sent; the expectation is what we do with the address.
describe('classifyReply', () => {
  const cases: [string, Parameters<typeof classifyReply>[0], string, string, string][] = [
    [
      'Postfix unknown user',
      { smtpCode: 550, text: '550 5.1.1 <x@y.example>: Recipient address rejected: User unknown in local recipient table' },
      'permanent',
      'user_unknown',
      '5.1.1',
    ],
    [
      'Spamhaus listing',
      { smtpCode: 554, text: '554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org' },
      'blocked',
      'ip_blocked',
      '5.7.1',
    ],
    ['full mailbox with 5xx', { smtpCode: 552, text: '552 5.2.2 Mailbox full' }, 'transient', 'mailbox_full', '5.2.2'],
    ['Gmail rate limit', { smtpCode: 421, text: '421 4.7.0 Try again later, closing connection.' }, 'transient', 'system_error', '4.7.0'],
    ['no enhanced code', { smtpCode: 550, text: '550 No such user here' }, 'permanent', 'user_unknown', '5.0.0'],
    ['Gmail disabled account', { text: '550-5.2.1 The email account that you tried to reach is disabled.' }, 'permanent', 'mailbox_disabled', '5.2.1'],
    ['null MX', { smtpCode: 556, status: '5.1.10', text: '556 5.1.10 Recipient address has null MX' }, 'permanent', 'not_accept', '5.1.10'],
    [
      'no such domain',
      { text: 'Host or domain name not found. Name service error for name=neko.example.jp type=AAAA: Host not found' },
      'permanent',
      'host_unknown',
      '5.0.0',
    ],
    ['relay denied', { smtpCode: 554, text: '554 5.7.1 <kijitora@example.org>: Relay access denied' }, 'blocked', 'relay_denied', '5.7.1'],
    ['DMARC', { text: '550 5.7.509 Access denied, sending domain [EXAMPLE.JP] does not pass DMARC verification' }, 'blocked', 'auth_failure', '5.7.509'],
    ['SPF hard fail', { text: '550-5.7.26 The MAIL FROM domain [email.example.jp] has an SPF record with a hard fail' }, 'blocked', 'auth_failure', '5.7.26'],
    ['message too large', { text: '552 5.3.4 Message size exceeds fixed limit' }, 'blocked', 'message_too_large', '5.3.4'],
    ['content spam', { text: '554 5.6.0 This message has been scored as spam with a probability of more than 90%' }, 'blocked', 'spam_blocked', '5.6.0'],
    ['rejected sender', { text: '553 5.1.8 <root@host.example>... Domain of sender address root@host.example does not exist' }, 'blocked', 'sender_rejected', '5.1.8'],
    [
      'greylisting',
      { text: '450 4.2.0 <x@y.example>: Recipient address rejected: Greylisted, see http://postgrey.schweikert.ch/help/y.example.html' },
      'transient',
      'greylisted',
      '4.2.0',
    ],
    ['expired', { text: '554 4.4.7 Message expired: unable to deliver in 840 minutes.<421 4.4.2 Connection timed out>' }, 'transient', 'expired', '4.4.7'],
    ['routing loop', { text: '554 5.4.6 Too many hops' }, 'transient', 'network_error', '5.4.6'],
    ['rate limit', { text: '452 4.3.2 Connection rate limit exceeded.' }, 'transient', 'rate_limited', '4.3.2'],
    [
      '4xx user unknown is not final',
      { text: '450 4.1.1 <x@y.example>: Recipient address rejected: User unknown in virtual alias table' },
      'transient',
      'user_unknown',
      '4.1.1',
    ],
    ['bare reply code only', { smtpCode: 421 }, 'transient', 'temporary_failure', '4.0.0'],
    ['nothing at all', {}, 'transient', 'undefined', '5.0.0'],
  ];
  for (const [name, input, bounceType, reason, status] of cases) {
    it(name, () => expect(classifyReply(input)).toEqual({ bounceType, reason, status }));
  }

  it('prefers the enhanced code given separately to the one in the text', () => {
    expect(classifyReply({ smtpCode: 550, status: '5.1.1', text: 'Address rejected' })).toMatchObject({ status: '5.1.1', bounceType: 'permanent' });
  });

  it('reads a 4xx class as transient whatever the text says', () => {
    expect(classifyReply({ smtpCode: 451, text: '451 4.7.1 blocked using zen.spamhaus.org' }).bounceType).toBe('transient');
  });

  it('does not read a dotted IP address as a status code', () => {
    expect(classifyReply({ text: '550 host 192.0.2.153 said: No such user' }).status).toBe('5.0.0');
  });
});
