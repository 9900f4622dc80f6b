import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';

export interface Captured {
  /** The first `maxSize` bytes of the message. */
  raw: Buffer;
  /** SHA-256 of `raw`, hex: a retransmitted report (our 250 lost) is recognised by it. */
  sha256: string;
  /** Every byte that arrived. */
  size: number;
  truncated: boolean;
}

/**
 * Reads a DATA stream to its end, keeping at most `maxSize` bytes. An oversized report is
 * accepted and kept truncated (a 552 would make the sender bounce its own report, and the part
 * that says what failed comes first). The rest is read and dropped, so memory stays bounded
 * whatever the peer sends. The hash is taken chunk by chunk as bytes arrive, never as one long
 * step on the event loop.
 */
export async function captureMessage(stream: Readable, maxSize: number): Promise<Captured> {
  const kept: Buffer[] = [];
  const hash = createHash('sha256');
  let keptBytes = 0;
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (keptBytes < maxSize) {
      const take = Math.min(chunk.length, maxSize - keptBytes);
      const part = take === chunk.length ? chunk : chunk.subarray(0, take);
      kept.push(part);
      hash.update(part);
      keptBytes += take;
    }
  }
  return { raw: Buffer.concat(kept, keptBytes), sha256: hash.digest('hex'), size, truncated: size > keptBytes };
}
