import type { Readable } from 'node:stream';

export interface Captured {
  /** The first `maxSize` bytes of the message. */
  raw: Buffer;
  /** Every byte that arrived. */
  size: number;
  truncated: boolean;
}

/**
 * Reads a DATA stream to its end, keeping at most `maxSize` bytes. An oversized report is
 * accepted and kept truncated (SPEC §5): a 552 would make the sender bounce its own report, and
 * the part that says what failed comes first. The rest is read and dropped, so memory stays
 * bounded whatever the peer sends.
 */
export async function captureMessage(stream: Readable, maxSize: number): Promise<Captured> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (keptBytes < maxSize) {
      const take = Math.min(chunk.length, maxSize - keptBytes);
      kept.push(take === chunk.length ? chunk : chunk.subarray(0, take));
      keptBytes += take;
    }
  }
  return { raw: Buffer.concat(kept, keptBytes), size, truncated: size > keptBytes };
}
