import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { headerValues } from '../../src/submission/header-values.ts';
import { joinFields, splitFields } from '../../src/submission/headers.ts';

/** Header blocks as clients send them, the awkward ones included; latin1 strings of the octets. */
const BLOCKS = [
  ['From: shop@acme.test', 'To: bob@dest.test', 'Subject: hello', 'Message-ID: <m1@acme.test>'],
  ['From: "Shop, the" <shop@acme.test>', 'To: Alice <alice@dest.test>, "Bob B." <bob@dest.test>', 'Cc: carol@dest.test'],
  ['From: =?UTF-8?B?R3LDvMOfZQ==?= <shop@acme.test>', 'Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe_aus_K=C3=B6ln?=', 'Reply-To: =?iso-8859-1?Q?Andr=E9?= <andre@acme.test>'],
  ['From: shop@acme.test', 'To: a@dest.test', 'To: b@dest.test, c@dest.test', 'Cc: d@dest.test', 'Cc: e@dest.test'],
  ['From: shop@acme.test', 'Subject: first', 'Subject: second', 'Reply-To: one@acme.test', 'Reply-To: two@acme.test'],
  ['From: shop@acme.test', 'To: undisclosed-recipients:;', 'Cc: Team: a@dest.test, b@dest.test;, c@dest.test'],
  ['From: shop@acme.test', 'To: user@xn--bcher-kva.example, =?utf-8?Q?evil=40x.test?= <real@dest.test>'],
  ['From: shop@acme.test', 'To: =?utf-8?B?IkV2ZSIgPGV2ZUBldmlsLnRlc3Q+?=', 'Message-ID: m2@acme.test'],
  ['From: Gr\xc3\xbc\xc3\x9fe <shop@acme.test>', 'Subject: caf\xc3\xa9 ouvert', 'To: Z\xc3\xbcrich <z@dest.test>'],
  ['From: shop@acme.test', 'To: first@dest.test,\r\n second@dest.test,\r\n\tthird@dest.test', 'Subject: a folded\r\n subject line', 'Message-ID:\r\n <m3@acme.test>'],
  ['From: shop@acme.test', 'To:', 'Subject:', 'Cc: not an address'],
  ['From: <>', 'To: a@dest.test (comment) , b@dest.test'],
  // Fields that are not read, around the ones that are: passed over, and they change nothing.
  [
    'Received: from app.acme.test (app.acme.test [192.0.2.7])\r\n\tby mx.acme.test; Thu, 26 Nov 2026 10:00:00 +0000',
    'DKIM-Signature: v=1; a=rsa-sha256; d=acme.test; s=k1;\r\n b=abc',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=iso-8859-1',
    'From: Gr\xfc\xdfe <shop@acme.test>',
    'List-Unsubscribe: <mailto:u@acme.test>',
    'X-Campaign: spring',
    'To: bob@dest.test',
    'Subject: Caf\xe9',
    'Date: Thu, 26 Nov 2026 10:00:00 +0000',
    'Message-ID: <m4@acme.test>',
  ],
];

const picked = (mail: Awaited<ReturnType<typeof simpleParser>>) => ({
  from: mail.from,
  to: mail.to,
  cc: mail.cc,
  replyTo: mail.replyTo,
  subject: mail.subject,
  messageId: mail.messageId,
});

describe('header values of a submission', () => {
  it.each(BLOCKS.map((block) => [block.join(' | ').slice(0, 80), block] as const))('are what simpleParser reads: %s', async (_name, block) => {
    const fields = splitFields(block.join('\r\n'))!;
    const viaParser = await simpleParser(Buffer.from(`${joinFields(fields)}\r\n`, 'latin1'), { skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true });
    const values = headerValues(fields);
    expect(JSON.parse(JSON.stringify(values))).toStrictEqual(JSON.parse(JSON.stringify(picked(viaParser))));
  });
});
