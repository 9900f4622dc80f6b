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
