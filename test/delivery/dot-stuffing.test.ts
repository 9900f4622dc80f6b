import DataStream from 'nodemailer/lib/smtp-connection/data-stream';
import type { Transform } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { stuffedChunk, withFastStuffing } from '../../src/delivery/dot-stuffing.ts';

/** What a DataStream writes for these chunks, and the byte counts it reports. */
async function through(stream: Transform, chunks: Buffer[]): Promise<{ out: string; counts: [number, number] }> {
  const out: Buffer[] = [];
  stream.on('data', (c: Buffer) => out.push(c));
  const ended = new Promise((resolve) => stream.on('end', resolve));
  for (const c of chunks) stream.write(c);
  stream.end();
  await ended;
  const s = stream as unknown as { inByteCount: number; outByteCount: number };
  return { out: Buffer.concat(out).toString('latin1'), counts: [s.inByteCount, s.outByteCount] };
}

/** A small deterministic generator (xorshift), so a failure names its seed. */
function random(seed: number) {
  let x = seed || 1;
  return (n: number) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
}

describe('dot-stuffing with indexOf', () => {
  it('writes exactly what nodemailer writes, chunk boundaries anywhere, bare CR and LF included', async () => {
    for (let seed = 1; seed <= 400; seed++) {
      const r = random(seed);
      const alphabet = seed % 2 ? ['a', '.', '\r\n', '\r\n.', 'b'] : ['a', '.', '\r', '\n', '\r\n', 'b'];
      const text = Array.from({ length: r(60) }, () => alphabet[r(alphabet.length)]).join('');
      const bytes = Buffer.from(text, 'latin1');
      const chunks: Buffer[] = [];
      for (let at = 0; at < bytes.length;) {
        const end = Math.min(bytes.length, at + 1 + r(12));
        chunks.push(bytes.subarray(at, end));
        at = end;
      }
      const expected = await through(new DataStream(), chunks);
      expect({ seed, ...(await through(withFastStuffing(new DataStream()), chunks)) }).toStrictEqual({ seed, ...expected });
    }
  });

  it('sends a message written at once and its final dot as one chunk, a single write to the socket', async () => {
    const message = Buffer.from('Subject: x\r\n\r\n.hidden\r\nend\r\n');
    const stream = withFastStuffing(new DataStream());
    const chunks: string[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c.toString('latin1')));
    const ended = new Promise((resolve) => stream.on('end', resolve));
    stream.write(message);
    stream.end();
    await ended;
    expect(chunks).toStrictEqual(['Subject: x\r\n\r\n..hidden\r\nend\r\n.\r\n']);
    expect((stream as unknown as { outByteCount: number }).outByteCount).toBe(chunks[0]!.length);
  });

  it('takes the indexOf path for CRLF text and leaves bare line breaks to the general loop', () => {
    expect(stuffedChunk(Buffer.from('.a\r\nb\r\n..c\r\n'), false)?.toString()).toBe('..a\r\nb\r\n...c\r\n');
    expect(stuffedChunk(Buffer.from('abc'), LF_BYTE)).not.toBeNull();
    expect(stuffedChunk(Buffer.from('a\nb'), false)).toBeNull();
    expect(stuffedChunk(Buffer.from('a\rb'), false)).toBeNull();
    expect(stuffedChunk(Buffer.from('\nb'), 0x0d)?.toString()).toBe('\nb');
  });
});

const LF_BYTE = 0x0a;
