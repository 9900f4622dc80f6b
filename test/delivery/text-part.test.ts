import { simpleParser } from 'mailparser';
import MimeNode from 'nodemailer/lib/mime-node';
import { describe, expect, it } from 'vitest';
import { normaliseMessage } from '../../src/dkim/sign.ts';
import { encodeText, quotedPrintable, type Slot } from '../../src/delivery/text-part.ts';

/** One text part, header fields and body, as the bytes between two boundary lines of a multipart. */
function encodeTextPart(slot: Slot, content: string): Buffer {
  const part = encodeText(slot, content);
  return Buffer.from(`${part.contentType}${part.transferEncoding}\r\n${part.body}`, 'latin1');
}

/** The same part as nodemailer's MIME builder embeds it in a multipart, cut out between the boundaries. */
async function builtByNodemailer(slot: Slot, content: string): Promise<string> {
  const root = new MimeNode('multipart/alternative');
  root.createChild(`text/${slot === 'html' ? 'html' : 'plain'}; charset=utf-8`).setContent(content);
  const built = normaliseMessage(await root.build()).toString('latin1');
  const start = built.indexOf('\r\n\r\n') + 4;
  const delimiter = built.slice(start, built.indexOf('\r\n', start));
  return built.slice(start + delimiter.length + 2, built.lastIndexOf(`\r\n${delimiter}--`));
}

const fields = (part: string) => part.slice(0, part.indexOf('\r\n\r\n'));
const lines = (part: string) => part.slice(part.indexOf('\r\n\r\n') + 4).split('\r\n');
/** What a mail client shows: line ends as LF, trailing line ends aside. */
const shown = (s: string) => s.replace(/\r\n|\r/g, '\n').replace(/\n+$/, '');

async function decoded(slot: Slot, part: string): Promise<string> {
  const parsed = await simpleParser(Buffer.from(`MIME-Version: 1.0\r\n${part}\r\n`, 'latin1'));
  return shown(slot === 'html' ? parsed.html || '' : (parsed.text ?? ''));
}

const link = (i: number) => `<a href="https://shop.example/p/${i}?a=1&amp;b=2#top">item ${i}</a>`;
const SAMPLES: Record<string, string> = {
  'short ASCII lines': '<p>Hello</p>\n<p>World</p>\n',
  'bare LF and CR line ends': 'one\ntwo\rthree\r\nfour',
  'a long ASCII line': `<p>${Array.from({ length: 40 }, (_, i) => link(i)).join(' ')}</p>`,
  'Latin accents': 'Grüße aus Köln, café crème et déjà vu. '.repeat(20),
  'mostly Cyrillic': 'Привет, мир! Это письмо на русском языке. '.repeat(10),
  'CJK and emoji': '日本語のメール 📬 を送ります。'.repeat(30),
  'trailing spaces and tabs': 'line with space \nline with tab\t\nend ',
  'equals signs and dots at line starts': '.dot\n=equals=\n=3D\n'.repeat(30),
  'control characters': 'bell\u0007 and form\u000c feed',
  'a tracked 1 KB URL': `<a href="https://t.example/t/c/${'A'.repeat(1000)}">x</a>`,
  nothing: '',
};

describe('encoding one text part for one recipient', () => {
  it.each(Object.entries(SAMPLES))('picks the fields nodemailer would for %s, keeps lines short, and decodes to the content', async (_name, content) => {
    for (const slot of ['html', 'text'] as const) {
      const ours = encodeTextPart(slot, content).toString('latin1');
      const theirs = await builtByNodemailer(slot, content);
      expect(fields(ours)).toBe(fields(theirs));
      const limit = fields(ours).endsWith('7bit') ? 998 : 76;
      expect(lines(ours).filter((line) => line.length > limit)).toStrictEqual([]);
      expect(await decoded(slot, ours)).toBe(shown(content));
    }
  });

  it('encodes a 2 MB part with non-ASCII text in short lines that decode to it', async () => {
    const content = `<html><body>${Array.from({ length: 20_000 }, (_, i) => `<p>Grüße ${link(i)}</p>`).join('\n')}</body></html>`;
    const ours = encodeTextPart('html', content).toString('latin1');
    expect(fields(ours)).toBe('Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable');
    expect(lines(ours).filter((line) => line.length > 76)).toStrictEqual([]);
    expect(await decoded('html', ours)).toBe(shown(content));
  });
});

/** Quoted-printable decoded by RFC 2045 §6.7: soft breaks removed, =XX to its octet. */
function qpDecode(encoded: string): Buffer {
  const octets: number[] = [];
  const text = encoded.replace(/=\r\n/g, '');
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '=') {
      octets.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else octets.push(text.charCodeAt(i));
  }
  return Buffer.from(octets);
}

describe('quoted-printable in one pass', () => {
  const pieces = ['word', ' ', '  ', '\t', '\n', '\r\n', '\r', '=', 'é', '€', '📬', 'x'.repeat(80), '.', 'a b c d e f g h i j k l m n o p q r s t u v w x y z'];

  it('keeps lines within 76 characters, breaks no UTF-8 sequence across lines, and decodes to the text', () => {
    let seed = 11;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let i = 0; i < 300; i++) {
      const text = Array.from({ length: next() % 60 }, () => pieces[next() % pieces.length]).join('');
      const encoded = quotedPrintable(text);
      const lines = encoded.split('\r\n');
      expect(lines.filter((line) => line.length > 76)).toStrictEqual([]);
      // No whitespace left bare at a line's end, where a transport may strip it.
      expect(lines.filter((line) => /[ \t]$/.test(line))).toStrictEqual([]);
      for (const line of lines.filter((l) => l.endsWith('='))) {
        expect(qpDecode(line.slice(0, -1)).toString('utf8')).not.toContain('\uFFFD');
      }
      expect(qpDecode(encoded).toString('utf8')).toBe(text.replace(/\r\n|\r|\n/g, '\r\n'));
    }
  });

  it('breaks a long line after a space near the limit rather than inside a word', () => {
    const encoded = quotedPrintable('Your order has shipped and is on its way. Track it from your account page at any time.');
    expect(encoded).toBe('Your order has shipped and is on its way. Track it from your account page =\r\nat any time.');
  });
});
