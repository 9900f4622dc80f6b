import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { Logger } from '../core/ports.ts';
import { systemClock } from '../core/ports.ts';
import { startWorker } from '../threads/start.ts';
import { Batcher, type Batch } from '../core/batcher.ts';
import { CopyBuilder, type BuiltCopy, type CopyJob } from './copy-builder.ts';
import { LIGHT_RENDER_BYTES } from './fair-scheduler.ts';
import type { SignBatch, SignResult } from './sign-thread.ts';

/** Builds and signs one recipient's copy; on the event loop or in signing threads. */
export interface CopySigner {
  /** Gets ready ahead of the first copy (threads started). */
  start(): void;
  build(job: CopyJob): Promise<BuiltCopy>;
  /** Ends the threads; copies still in flight fail (delivery defers them). */
  close(): Promise<void>;
}

/** Shared MIME kept for the next recipients of a message, by total size, per process. */
export const MAX_CACHED_BYTES = 64 * 1024 * 1024;

/**
 * `delivery.signingThreads`: null is one thread per available core but the event loop's, at least
 * one (on two cores, a second thread measured slower than one: the event loop lost its core);
 * 0 signs on the event loop.
 */
export function signingThreads(configured: number | null): number {
  return configured ?? Math.max(1, availableParallelism() - 1);
}

/** `signingThreads` 0: the copies are built on the event loop, as tools and some tests want. */
export function inlineSigner(): CopySigner {
  const builder = new CopyBuilder(systemClock, MAX_CACHED_BYTES);
  return { start: () => {}, build: (job) => builder.build(job), close: async () => {} };
}

// Newer Node gives the thread this name (its comm in /proc), which the benches read per thread.
function startThread(maxCachedBytes: number): Worker {
  return startWorker(import.meta.url, 'sign-thread', { name: 'mailsvc-sign', workerData: { maxCachedBytes } });
}

// A thread that dies before it is ready (a broken install) is not restarted in a tight loop.
const RESTART_DELAY_MS = 1_000;

interface Answer {
  resolve(copy: BuiltCopy): void;
  reject(err: Error): void;
}

/** A thread's worker once it said it is ready; rejected if it fails first. */
interface Readiness {
  worker: Promise<Worker>;
  ready(worker: Worker): void;
  failed(err: Error): void;
}

function readiness(): Readiness {
  let ready!: (worker: Worker) => void;
  let failed!: (err: Error) => void;
  const worker = new Promise<Worker>((resolve, reject) => ((ready = resolve), (failed = reject)));
  // Nobody may be waiting when a thread fails before it was ever asked for a copy.
  worker.catch(() => undefined);
  return { worker, ready, failed };
}

interface Thread {
  worker: Worker | null;
  readiness: Readiness;
  /** Copies posted to this thread and not answered yet, by sequence number. */
  inFlight: Map<number, Answer>;
  /** The copies asked for in one tick go to the thread in one message. */
  copies: Batcher<CopyJob, BuiltCopy>;
  /** Heavy copies posted or queued to this thread and not answered yet. */
  heavy: number;
}

const notSigned = (err: Error) => new Error(`${err.message}; the copy was not signed`);

/** Shared MIME of light messages built on the event loop while their thread is busy with heavy copies. */
const BESIDE_CACHED_BYTES = 8 * 1024 * 1024;

const isHeavy = (job: CopyJob) => (job.weight ?? 0) >= LIGHT_RENDER_BYTES;

/**
 * DKIM signing and MIME building off the event loop: `size` worker threads, started with the
 * delivery loop or on the first copy. Copies of one message go to one thread (by message id), so
 * the message's MIME is built once and cached there. The copies asked for in one tick go to a
 * thread in one message; each signed copy comes back on its own as soon as it is ready,
 * transferred, not copied, so sending starts while the thread signs the rest. Nothing waits here
 * unbounded: delivery has at most `delivery.concurrency` copies in flight. A thread that fails or
 * exits fails its copies in flight (delivery defers them, to be retried) and is replaced. While a
 * thread has heavy copies (by the fair scheduler's weight) queued or in flight, the light copies
 * routed to it are built on the event loop instead, so they do not wait seconds behind them.
 */
export class SigningPool implements CopySigner {
  private readonly threads: Thread[];
  private readonly maxCachedBytes: number;
  private seq = 0;
  private closed = false;
  private started = false;

  constructor(
    size: number,
    private readonly log: Logger,
  ) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`signing threads must be a whole number of at least 1, not ${size}`);
    this.threads = Array.from({ length: size }, () => {
      const thread: Thread = {
        worker: null,
        readiness: readiness(),
        inFlight: new Map(),
        copies: new Batcher({ name: 'the signing pool', start: 'microtask', write: (batch) => this.post(thread, batch) }),
        heavy: 0,
      };
      return thread;
    });
    this.maxCachedBytes = Math.floor(MAX_CACHED_BYTES / size);
  }

  get size(): number {
    return this.threads.length;
  }

  private besideBuilder: CopyBuilder | null = null;

  private beside(): CopyBuilder {
    return (this.besideBuilder ??= new CopyBuilder(systemClock, BESIDE_CACHED_BYTES));
  }

  /** Starts the threads (otherwise the first copy does), so the first copies find them warm. */
  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    for (const thread of this.threads) this.spawn(thread);
  }

  build(job: CopyJob): Promise<BuiltCopy> {
    if (this.closed) return Promise.reject(new Error('the signing threads are stopped'));
    this.start();
    const thread = this.threads[job.row.id % this.threads.length]!;
    // A thread encoding a heavy copy (a 26 MB tracked copy takes seconds) would keep a light
    // copy of another message waiting that long: the light one (a few milliseconds) is built
    // on the event loop instead.
    if (!isHeavy(job)) return thread.heavy > 0 ? this.beside().build(job) : thread.copies.add(job);
    thread.heavy++;
    return thread.copies.add(job).finally(() => void thread.heavy--);
  }

  /**
   * Ends every thread and starts fresh ones; the copies in flight fail, as when a thread dies.
   * Frees the threads' caches and parsed keys at once (e.g. after keys were rotated).
   */
  recycle(): void {
    for (const thread of this.threads) if (thread.worker) this.replace(thread, new Error('the signing thread was restarted'));
  }

  async close(): Promise<void> {
    this.closed = true;
    const stopped = new Error('the signing threads are stopped');
    const workers: Worker[] = [];
    for (const thread of this.threads) {
      thread.copies.abort(notSigned(stopped));
      if (thread.worker) workers.push(thread.worker);
      thread.worker = null;
      this.failAll(thread, stopped);
    }
    await Promise.all(workers.map((w) => w.terminate()));
  }

  /** One tick's copies to the thread, once it is ready; settled as their answers come back. */
  private async post(thread: Thread, batch: Batch<CopyJob, BuiltCopy>): Promise<void> {
    const jobs = batch.take();
    if (jobs.length === 0) return;
    const worker = await thread.readiness.worker;
    // Replaced between its ready and now: these copies were never posted.
    if (thread.worker !== worker) throw notSigned(new Error('the signing thread was restarted'));
    const posted = jobs.map((job) => ({ seq: ++this.seq, job }));
    await new Promise<void>((done) => {
      let left = posted.length;
      const answered = () => --left === 0 && done();
      posted.forEach(({ seq }, i) =>
        thread.inFlight.set(seq, {
          resolve: (copy) => (batch.resolve(i, copy), answered()),
          reject: (err) => (batch.reject(i, err), answered()),
        }),
      );
      worker.postMessage({ jobs: posted } satisfies SignBatch);
    });
  }

  private spawn(thread: Thread): void {
    const worker = startThread(this.maxCachedBytes);
    // The threads never keep the process alive on their own: close() ends them on shutdown.
    worker.unref();
    thread.worker = worker;
    let ready = false;
    const current = () => thread.worker === worker;
    worker.on('message', (message: SignResult | 'ready') => {
      if (!current()) return;
      if (message === 'ready') {
        ready = true;
        thread.readiness.ready(worker);
        return;
      }
      const answer = thread.inFlight.get(message.seq);
      thread.inFlight.delete(message.seq);
      if (!answer) return;
      if ('error' in message) answer.reject(new Error(message.error));
      else answer.resolve({ raw: Buffer.from(message.raw.buffer, message.raw.byteOffset, message.raw.byteLength), built: message.built });
    });
    const failed = (err: Error) => {
      if (!current()) return;
      this.log.error({ phase: 'deliver', err }, 'signing thread failed; replaced');
      this.replace(thread, err, ready ? 0 : RESTART_DELAY_MS);
    };
    worker.on('error', failed);
    worker.on('exit', (code) => failed(new Error(`the signing thread exited with code ${code}`)));
  }

  /** Fails the thread's copies (in flight and waiting for it), ends it, and starts another in its place. */
  private replace(thread: Thread, err: Error, delayMs = 0): void {
    const old = thread.worker;
    thread.worker = null;
    this.failAll(thread, err);
    if (old) void old.terminate();
    if (this.closed) return;
    if (delayMs === 0) this.spawn(thread);
    else setTimeout(() => !this.closed && thread.worker === null && this.spawn(thread), delayMs).unref();
  }

  /** Rejects the copies posted to the thread and those waiting for it to be ready; the next wait a new thread. */
  private failAll(thread: Thread, err: Error): void {
    const answers = [...thread.inFlight.values()];
    thread.inFlight.clear();
    thread.readiness.failed(notSigned(err));
    thread.readiness = readiness();
    for (const answer of answers) answer.reject(notSigned(err));
  }
}
