import { parentPort, workerData } from 'node:worker_threads';
import { systemClock } from '../core/ports.ts';
import { nameThisThread } from '../threads/name.ts';
import { CopyBuilder, type CopyJob } from './copy-builder.ts';

/** What the pool posts: several copies at once, each with the pool's sequence number. */
export interface SignBatch {
  jobs: { seq: number; job: CopyJob }[];
}

/** What a thread answers for each copy as soon as it is signed: its bytes (transferred, not copied) or its error. */
export type SignResult = { seq: number; raw: Uint8Array; built: boolean } | { seq: number; error: string };

// One signing thread: builds and signs the copies of each batch in order, answering each copy as
// soon as it is ready, so the first copies of a batch are on their way while the thread signs the
// rest. Its cache holds the messages the pool routes to it (by message id).
const port = parentPort!;
nameThisThread('mailsvc-sign');
const builder = new CopyBuilder(systemClock, (workerData as { maxCachedBytes: number }).maxCachedBytes);

async function signBatch({ jobs }: SignBatch): Promise<void> {
  for (const { seq, job } of jobs) {
    try {
      const { raw, built } = await builder.build(job);
      // Only a buffer that is whole can be transferred: a small Buffer may sit in Node's shared
      // pool, which must not be taken away from this thread.
      const own = raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength ? raw : new Uint8Array(raw);
      port.postMessage({ seq, raw: own, built } satisfies SignResult, [own.buffer as ArrayBuffer]);
    } catch (err) {
      port.postMessage({ seq, error: (err as Error).message } satisfies SignResult);
    }
  }
}

// signBatch answers every copy, an error included, so nothing is left for the promise to report.
port.on('message', (batch: SignBatch) => void signBatch(batch));
port.postMessage('ready');
