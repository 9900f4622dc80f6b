import MailComposer from 'nodemailer/lib/mail-composer';
import { describe, expect, it } from 'vitest';
import { normaliseMessage, splitMessage } from '../../src/dkim/sign.ts';
import { writeMime } from '../../src/delivery/mime-write.ts';
import { plainAlternative, plainHead as plainHeadOf } from '../../src/delivery/plain-head.ts';

/** A one-part message's fields, as delivery maps a stored message to the builder's options. */
interface HeadFields {
  from: string;
  to: string[];
  cc: string[];
  replyTo: string[];
  subject: string;
  date: Date;
  messageId: string;
  feedbackId: string;
  headers: Record<string, string>;
  contentType: 'text/plain' | 'text/html';
}

function options(f: HeadFields) {
  return {
    from: f.from,
    to: f.to.length > 0 ? f.to : undefined,
    cc: f.cc.length > 0 ? f.cc : undefined,
    replyTo: f.replyTo.length > 0 ? f.replyTo : undefined,
    subject: f.subject,
    date: f.date,
    messageId: f.messageId,
    [f.contentType === 'text/html' ? 'html' : 'text']: 'x',
    attachments: [],
    headers: { ...f.headers, 'Feedback-ID': f.feedbackId },
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

const plainHead = (f: HeadFields) => plainHeadOf(options(f));

/** The head nodemailer's MIME builder writes for the same options, Content-Transfer-Encoding left out. */
function nodemailerHead(f: HeadFields): string {
  const root = new MailComposer(options(f)).compile();
  const { head } = splitMessage(normaliseMessage(Buffer.from(`${root.buildHeaders()}\r\n\r\n`)));
  return head.toString('latin1').replace(/^Content-Transfer-Encoding:[^\r\n]*\r\n/im, '');
}

const base: HeadFields = {
  from: 'News <news@shop.example>',
  to: ['user@dest.test'],
  cc: [],
  replyTo: [],
  subject: 'Your order has shipped',
  date: new Date(Date.UTC(2026, 0, 5, 3, 4, 5)),
  messageId: '<1a2b.3c@shop.example>',
  feedbackId: 'transactional:12:mx.shop.example',
  headers: {},
  contentType: 'text/plain',
};

const MAILBOXES = [
  'user@dest.test',
  'Jane Doe <jane@dest.test>',
  'Bob  Smith <b@s.test>',
  'J. Doe <a@b.test>',
  '"Doe, Jane" <x@y.test>',
  "O'Neil <o@n.test>",
  'Jöhn <j@dest.test>',
  'user@bücher.example',
  'first.last+tag@sub.dest.test',
  'a@[127.0.0.1]',
  'UPPER@DEST.TEST',
  'a=?b@dest.test',
  "o'neil@dest.test",
  '{x}@dest.test',
  'Ann 2 <a=b@dest.test>',
  'Very Long Display Name Of Someone Important Indeed <someone.important@department.example.com>',
];
const words = (n: number) => Array.from({ length: n }, (_, i) => (i % 2 ? 'ab' : 'cd')).join(' ');
const SUBJECTS = [
  // With "Subject: " these make lines of 75, 76 and 77 characters.
  words(23).slice(0, 66),
  words(23).slice(0, 67),
  words(23).slice(0, 68),
  'a-b_c (d) [e] {f} \\h',
  'say "hi"',
  'Your order has shipped',
  'Hi',
  '  leading spaces',
  'trailing ',
  'two  spaces',
  'Grüße',
  'an =?utf-8?q?x?= word',
  'tab\there',
  'a'.repeat(90),
  'x'.repeat(66),
  '',
];

describe('a plain head written without the MIME builder', () => {
  it('is the bytes nodemailer writes, whenever it is written at all', () => {
    let written = 0;
    let cases = 0;
    const check = (f: HeadFields) => {
      cases++;
      const ours = plainHead(f);
      if (ours === null) return;
      written++;
      expect(ours, JSON.stringify(f)).toBe(nodemailerHead(f));
    };
    for (const from of MAILBOXES) check({ ...base, from });
    for (const to of MAILBOXES) check({ ...base, to: [to] });
    for (let i = 0; i < MAILBOXES.length - 1; i++) check({ ...base, to: [MAILBOXES[i]!, MAILBOXES[i + 1]!], cc: [MAILBOXES[i]!], replyTo: [MAILBOXES[i + 1]!] });
    for (const subject of SUBJECTS) check({ ...base, subject });
    for (const contentType of ['text/plain', 'text/html'] as const) check({ ...base, contentType });
    check({ ...base, date: new Date(Date.UTC(2027, 11, 31, 23, 59, 59)) });
    check({ ...base, feedbackId: `broadcast:1:${'h'.repeat(70)}` });
    check({ ...base, headers: { 'X-Campaign': 'spring' } });
    check({ ...base, messageId: '<has space@shop.example>' });
    check({ ...base, to: [], cc: ['c@dest.test'] });
    check({ ...base, to: [], cc: [] });
    expect(cases).toBeGreaterThan(40);
    // The common shapes take the direct path; if none did, this test would compare nothing.
    expect(written).toBeGreaterThanOrEqual(15);
  });

  it('frames a text and an HTML alternative in the bytes nodemailer writes for the same boundary', () => {
    const BASE = '0123456789abcdef';
    // Each part stands in whole, its own header fields included, as delivery fills it in.
    const parts = { text: { raw: 'TEXT-PART-MARKER' }, html: { raw: 'HTML-PART-MARKER' } };
    const alternative = (f: HeadFields) => ({ ...options(f), text: 'x', html: 'x' });
    let written = 0;
    const check = (f: HeadFields) => {
      const frame = plainAlternative(alternative(f), BASE);
      if (frame === null) return expect(plainHead(f), JSON.stringify(f)).toBeNull();
      written++;
      const ours = `${frame.head}\r\n${frame.open}${parts.text.raw}${frame.between}${parts.html.raw}${frame.close}`;
      const root = new MailComposer({ ...alternative(f), ...parts, baseBoundary: BASE }).compile();
      expect(ours, JSON.stringify(f)).toBe(normaliseMessage(writeMime(root)).toString('latin1'));
    };
    for (const from of MAILBOXES) check({ ...base, from });
    for (const to of MAILBOXES) check({ ...base, to: [to] });
    for (let i = 0; i < MAILBOXES.length - 1; i++) check({ ...base, to: [MAILBOXES[i]!, MAILBOXES[i + 1]!], cc: [MAILBOXES[i]!], replyTo: [MAILBOXES[i + 1]!] });
    for (const subject of SUBJECTS) check({ ...base, subject });
    check({ ...base, feedbackId: `broadcast:1:${'h'.repeat(70)}` });
    check({ ...base, headers: { 'X-Campaign': 'spring' } });
    check({ ...base, to: [], cc: [] });
    expect(written).toBeGreaterThanOrEqual(15);
    // Only a text and an HTML part together, and a boundary of nodemailer's shape.
    expect(plainAlternative(options(base), BASE)).toBeNull();
    expect(plainAlternative(alternative(base), 'not-hex-digits!!')).toBeNull();
    expect(plainAlternative({ ...alternative(base), attachments: [{ filename: 'a.txt', content: 'eA==' }] }, BASE)).toBeNull();
  });

  it('leaves to nodemailer what needs quoting, encoding, folding, or the customer own fields', () => {
    expect(plainHead(base)).not.toBeNull();
    expect(plainHead({ ...base, from: 'J. Doe <a@b.test>' })).toBeNull();
    expect(plainHead({ ...base, to: ['Jöhn <j@dest.test>'] })).toBeNull();
    expect(plainHead({ ...base, subject: 'Grüße' })).toBeNull();
    expect(plainHead({ ...base, subject: 'a'.repeat(90) })).toBeNull();
    expect(plainHead({ ...base, subject: 'say "hi"' })).toBeNull();
    expect(plainHead({ ...base, headers: { 'X-Campaign': 'spring' } })).toBeNull();
  });
});
