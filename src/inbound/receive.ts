import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';

// Received bytes are written into shared segments as they arrive: the parser thread reads them
// without a copy, and the event loop never copies a whole 10 MB report in one step. One segment
// holds exactly what an unproven report keeps (raw-bounds.ts).
const SEGMENT_BYTES = 256 * 1024;

/** The bytes of one received message, in segments of shared memory. */
export class ReportBytes {
  constructor(
    /** Views over SharedArrayBuffers (or plain buffers), in order; only the last may be short. */
    readonly segments: Uint8Array[],
    readonly length: number,
  ) {}

  static of(buffer: Buffer): ReportBytes {
    return new ReportBytes([buffer], buffer.length);
  }

  /** A copy of the first `n` bytes (at most `length`) in one ordinary Buffer. */
  head(n: number): Buffer {
    const want = Math.min(n, this.length);
    const out = Buffer.allocUnsafe(want);
    let at = 0;
    for (const s of this.segments) {
      if (at >= want) break;
      const take = Math.min(s.length, want - at);
      out.set(s.subarray(0, take), at);
      at += take;
    }
    return out;
  }
}

export interface Captured {
  /** The first `maxSize` bytes of the message. */
  raw: ReportBytes;
  /** SHA-256 of `raw`, hex: a retransmitted report (our 250 lost) is recognised by it. */
  sha256: string;
  /** Every byte that arrived. */
  size: number;
}

/**
 * Reads a DATA stream to its end, keeping at most `maxSize` bytes. An oversized report is
 * accepted and kept truncated (a 552 would make the sender bounce its own report, and the part
 * that says what failed comes first). The rest is read and dropped, so memory stays bounded
 * whatever the peer sends. The hash is taken chunk by chunk as bytes arrive, never as one long
 * step on the event loop.
 */
export async function captureMessage(stream: Readable, maxSize: number): Promise<Captured> {
  const segments: Uint8Array[] = [];
  const hash = createHash('sha256');
  let current: Uint8Array = new Uint8Array(0);
  let used = 0;
  let kept = 0;
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    let part = chunk.subarray(0, Math.max(0, Math.min(chunk.length, maxSize - kept)));
    hash.update(part);
    kept += part.length;
    while (part.length > 0) {
      if (used === current.length) {
        current = new Uint8Array(new SharedArrayBuffer(SEGMENT_BYTES));
        segments.push(current);
        used = 0;
      }
      const take = Math.min(part.length, current.length - used);
      current.set(part.subarray(0, take), used);
      used += take;
      part = part.subarray(take);
    }
  }
  if (segments.length > 0) segments[segments.length - 1] = current.subarray(0, used);
  return { raw: new ReportBytes(segments, kept), sha256: hash.digest('hex'), size };
}
