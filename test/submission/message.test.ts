import { describe, expect, it } from 'vitest';
import { generatedMessageId, readSubmission } from '../../src/submission/message.ts';

const NOW = Date.UTC(2026, 10, 24, 9, 0, 0);
const rcpts = [{ address: 'bob@dest.test', local: 'bob', domain: 'dest.test', name: null }];

async function stored(raw: string): Promise<string> {
  const { message } = await readSubmission(Buffer.from(raw, 'latin1'), rcpts, NOW);
  if (message.content.kind !== 'mime') throw new Error('not MIME content');
  return message.content.raw.toString('latin1');
}

const head = ['From: shop@acme.test', 'To: bob@dest.test', 'Date: Tue, 24 Nov 2026 09:00:00 +0000', 'Message-ID: <m1@acme.test>', 'Subject: hello'];

describe('a submitted message as stored', () => {
  it('keeps the bytes of a message already in CRLF with short lines, 8-bit octets included', async () => {
    const raw = [...head, '', 'line one', 'Gr\xfc\xdfe \xe9t\xe9', '', '.. dotted', ''].join('\r\n');
    expect(await stored(raw)).toBe(raw);
  });

  it('normalises bare LF, a bare CR and a line over 998 octets, as from the same message in CRLF', async () => {
    const long = `${'word '.repeat(250)}end`;
    const crlf = await stored([...head, '', 'one', long, ''].join('\r\n'));
    expect(crlf.split('\r\n').every((line) => line.length <= 998)).toBe(true);
    expect(crlf.replace(/\r\n/g, '')).toBe([...head, '', 'one', long, ''].join(''));
    expect(await stored([...head, '', 'one', long, ''].join('\n'))).toBe(crlf);
    expect(await stored([...head, '', 'one\r', long, ''].join('\r\n').replace('one\r\r\n', 'one\r'))).toBe(crlf);
  });

  it('ends the body with CRLF when the message does not', async () => {
    expect(await stored([...head, '', 'no final line break'].join('\r\n'))).toBe([...head, '', 'no final line break', ''].join('\r\n'));
  });
});

describe('reading a submitted message', () => {
  it('takes time linear in its size when it is already normal: 1 MB of short lines and of 998-octet lines alike', async () => {
    const lines = (length: number) => `${[...head, ''].join('\r\n')}\r\n${`${'x'.repeat(length)}\r\n`.repeat(Math.floor(1_000_000 / (length + 2)))}`;
    const timed = async (raw: string) => {
      const started = performance.now();
      expect(await stored(raw)).toBe(raw);
      return performance.now() - started;
    };
    await timed(lines(10));
    const short = await timed(lines(10));
    const long = await timed(lines(998));
    // A check that rescans each line from every position takes hundreds of times longer on the long lines.
    expect(long).toBeLessThan(Math.max(10 * short, 50));
  });
});

describe('the Message-ID given to a message submitted without one', () => {
  it('is unique, names the From domain, and sorts in the order the messages came, so that they share pages of the Message-ID index', async () => {
    const raw = ['From: shop@acme.test', 'To: bob@dest.test', 'Subject: no id', '', 'body', ''].join('\r\n');
    const { message } = await readSubmission(Buffer.from(raw, 'latin1'), rcpts, NOW);
    expect(message.messageId).toMatch(/^<[0-9a-z]{9}\.[0-9a-f]{18}\.submission@acme\.test>$/);
    expect(message.content.kind === 'mime' && message.content.raw.toString('latin1')).toContain(`Message-ID: ${message.messageId}\r\n`);

    const times = [NOW, NOW + 1, NOW + 999, NOW + 86_400_000, Date.UTC(2059, 0, 1)];
    const ids = times.flatMap((t) => [generatedMessageId(t, 'acme.test'), generatedMessageId(t, 'acme.test')]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.map((id) => id.slice(0, 10))).toStrictEqual([...ids].sort().map((id) => id.slice(0, 10)));
  });
});
