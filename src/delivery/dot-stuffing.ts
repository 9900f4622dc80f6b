import type { Transform, TransformCallback } from 'node:stream';

const CR = 0x0d;
const LF = 0x0a;
const DOT = Buffer.from('.');
const LF_DOT = Buffer.from('\n.');
const DOT_LINE = Buffer.from('.\r\n');
const LF_DOT_LINE = Buffer.from('\n.\r\n');
const CRLF_DOT_LINE = Buffer.from('\r\n.\r\n');

/** The state nodemailer's DataStream keeps between chunks (smtp-connection/data-stream.js). */
interface DataStream extends Transform {
  inByteCount: number;
  outByteCount: number;
  /** The chunk before's last byte; false before the first. */
  lastByte: number | false;
  _transform(chunk: Buffer | string, encoding: BufferEncoding, done: TransformCallback): void;
  _flush(done: TransformCallback): void;
}

/**
 * A chunk dot-stuffed as DataStream does it, when it has no bare CR or LF (DataStream would
 * turn those into CRLF): then the only change is a dot before each dot that starts a line, and
 * `indexOf` finds those where DataStream looks at every byte in a JavaScript loop (a few
 * percent of the event loop when relaying). Null when the chunk needs the general loop.
 */
export function stuffedChunk(chunk: Buffer, lastByte: number | false): Buffer | null {
  for (let lf = chunk.indexOf(LF); lf >= 0; lf = chunk.indexOf(LF, lf + 1)) {
    if ((lf > 0 ? chunk[lf - 1] : lastByte) !== CR) return null;
  }
  for (let cr = chunk.indexOf(CR); cr >= 0; cr = chunk.indexOf(CR, cr + 1)) {
    if (cr + 1 < chunk.length && chunk[cr + 1] !== LF) return null;
  }
  if (lastByte === CR && chunk[0] !== LF) return null;
  const parts: Buffer[] = [];
  let from = 0;
  if (chunk[0] === 0x2e && (lastByte === LF || lastByte === false)) parts.push(DOT);
  for (let at = chunk.indexOf(LF_DOT); at >= 0; at = chunk.indexOf(LF_DOT, at + 1)) {
    parts.push(chunk.subarray(from, at + 1), DOT);
    from = at + 1;
  }
  if (parts.length === 0) return chunk;
  parts.push(chunk.subarray(from));
  return Buffer.concat(parts);
}

/** The end of the data (RFC 5321 §4.1.1.4) after a chunk ending in `lastByte`, as DataStream writes it. */
function finalDot(lastByte: number | false): Buffer {
  if (lastByte === LF) return DOT_LINE;
  if (lastByte === CR) return LF_DOT_LINE;
  return CRLF_DOT_LINE;
}

/**
 * Gives one of nodemailer's DataStreams the `indexOf` path, its own loop kept for the rest, and
 * sends the final dot with the last chunk: DataStream pushes it alone, and each push is a write
 * of its own to the socket, so a message took two writes (a loopback round of its own for three
 * bytes) where one does. A chunk of the fast path is held until the next one or the end.
 */
export function withFastStuffing<T extends Transform>(stream: T): T {
  const data = stream as unknown as DataStream;
  const general = data._transform;
  let held: Buffer | null = null;
  data._transform = function (chunk, encoding, done) {
    const out = typeof chunk === 'string' || chunk.length === 0 ? null : stuffedChunk(chunk, this.lastByte);
    if (held !== null) this.push(held);
    held = null;
    if (out === null) return general.call(this, chunk, encoding, done);
    this.inByteCount += chunk.length;
    this.outByteCount += out.length;
    held = out;
    this.lastByte = (chunk as Buffer)[chunk.length - 1]!;
    done();
  };
  data._flush = function (done) {
    const dot = finalDot(this.lastByte);
    this.outByteCount += dot.length;
    this.push(held === null ? dot : Buffer.concat([held, dot]));
    held = null;
    done();
  };
  return stream;
}
