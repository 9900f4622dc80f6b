import MailComposer from 'nodemailer/lib/mail-composer';
import { describe, expect, it } from 'vitest';
import { writableInMemory, writeMime } from '../../src/delivery/mime-write.ts';

type Options = ConstructorParameters<typeof MailComposer>[0];

const base: Options = {
  from: 'Shop <news@shop.test>',
  to: ['ann@example.test'],
  subject: 'Your order',
  date: new Date(1_700_000_000_000),
  messageId: '<1@shop.test>',
  disableFileAccess: true,
  disableUrlAccess: true,
};

/**
 * The message written in one pass and what nodemailer's own streaming build gives for the same
 * compiled tree, each with its quoted-printable soft line breaks taken out: the one-pass encoder
 * may break the last line of a part elsewhere, which decodes to the same text.
 */
async function both(options: Options): Promise<{ written: string; built: string; lines: string[] }> {
  const root = new MailComposer({ ...base, ...options }).compile();
  expect(writableInMemory(root)).toBe(true);
  const raw = writeMime(root).toString('latin1');
  const built = (await root.build()).toString('latin1');
  const unfold = (mime: string) => mime.replace(/=\r\n/g, '');
  return { written: unfold(raw), built: unfold(built), lines: raw.split(/\r\n|\r|\n/) };
}

// A seeded generator: the same texts on every run.
function texts(seed: number, count: number): string[] {
  let state = seed;
  const next = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const pieces = ['a', 'Z', ' ', '\t', '\n', '\r\n', '\r', '=', '.', 'é', 'Ω', '漢', '😀', '\u0000', 'x'.repeat(90), ' \n', '=\r\n'];
  return Array.from({ length: count }, () => Array.from({ length: Math.floor(next() * 400) }, () => pieces[Math.floor(next() * pieces.length)]).join(''));
}

describe('MIME written in one pass', () => {
  it('is what nodemailer builds, for text, HTML, both, attachments and raw parts', async () => {
    const cases: Options[] = [
      { text: 'Hello.\n' },
      { text: '' },
      { html: '<p>Hi</p>' },
      { text: 'plain', html: '<p>rich</p>' },
      { text: `a long line ${'word '.repeat(40)}\nnext` },
      { text: 'Grüße aus Köln, naïve café' },
      { text: '日本語のテキストです。'.repeat(20) },
      { text: 'trailing spaces   \nand tabs\t\t\nend ' },
      { text: { raw: 'mailsvc-text-part-1' }, html: { raw: 'mailsvc-html-part-2' } },
      {
        text: 'see attached',
        attachments: [
          { filename: 'a.bin', content: Buffer.from([0, 1, 2, 250, 251, 13, 10, 13]).toString('base64'), encoding: 'base64', contentType: 'application/octet-stream' },
          { filename: 'notes.txt', content: Buffer.from('line one\r\nline two é').toString('base64'), encoding: 'base64', contentType: 'text/plain' },
          { filename: 'big.pdf', content: Buffer.alloc(10_000, 7).toString('base64'), encoding: 'base64', contentType: 'application/pdf' },
        ],
      },
      { subject: 'Ünïcödé subject that is rather long and needs encoding and folding across lines', text: 'x', headers: { 'X-Custom': 'välue' } },
    ];
    for (const options of cases) {
      const { written, built, lines } = await both(options);
      expect(written, JSON.stringify(options).slice(0, 120)).toBe(built);
      expect(lines.filter((line) => line.length > 76)).toEqual([]);
    }
  });

  it('agrees with nodemailer on 300 generated texts of line breaks, whitespace, equals signs and non-ASCII', async () => {
    const generated = texts(7, 300);
    for (const [i, text] of generated.entries()) {
      const { written, built, lines } = await both(i % 2 ? { text } : { text, html: `<p>${text}</p>` });
      expect(written, JSON.stringify(text)).toBe(built);
      expect(lines.filter((line) => line.length > 76)).toEqual([]);
    }
  });

  it('leaves to nodemailer what it cannot write in memory: stream transforms, quoted-printable outside text', () => {
    const transformed = new MailComposer({ ...base, text: 'x' }).compile();
    transformed.transform(() => undefined as never);
    expect(writableInMemory(transformed)).toBe(false);
    const qpBinary = new MailComposer({
      ...base,
      text: 'x',
      attachments: [{ filename: 'a.bin', content: 'a\rb', contentType: 'application/octet-stream', contentTransferEncoding: 'quoted-printable' }],
    }).compile();
    expect(writableInMemory(qpBinary)).toBe(false);
  });
});
