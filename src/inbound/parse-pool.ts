import type { Worker } from 'node:worker_threads';
import type { ParsedReport } from '../bounces/index.ts';
import type { Logger } from '../core/ports.ts';
import { UNREADABLE, type ReceivedMail } from './received.ts';
import type { ReportBytes } from './receive.ts';
import { startWorker } from '../threads/start.ts';

export interface ParsePoolOptions {
  /** Worker threads parsing reports (`inbound.parseWorkers`). */
  workers: number;
  /** Wall-clock time one report may take in a worker before it is given up (`inbound.parseBudgetMs`). */
  budgetMs: number;
  /** Reports that may wait for a free worker (`inbound.parseQueue`); more are refused. */
  maxQueued: number;
}

/** Why a report was stored without being parsed. */
export type UnparsedReason = 'time_budget' | 'worker_failed' | 'unreadable';

export type Outcome<T> = { parsed: T; unparsed: null } | { parsed: null; unparsed: UnparsedReason };
export type ParseOutcome = Outcome<ParsedReport>;

/** What a worker is asked to read the bytes as: a report (DSN, ARF) or a message for a route. */
export type ParseKind = 'report' | 'mail';

/** Turns raw report bytes into a parsed report, or says why it could not. */
export interface ReportParser {
  /** Rejects with ParseQueueFull when every worker is busy and the queue is full. */
  parse(raw: ReportBytes): Promise<ParseOutcome>;
  /** A message for a route, read with mailparser; the same workers, budget and queue. */
  parseMail(raw: ReportBytes): Promise<Outcome<ReceivedMail>>;
  close(): Promise<void>;
}

export class ParseQueueFull extends Error {
  constructor() {
    super('every report parser is busy and the queue is full');
    this.name = 'ParseQueueFull';
  }
}

// Parsing is linear and capped (bounces/limits.ts), so a 10 MB report needs far less than this;
// the limit turns a parser bug that allocates without end into one failed report.
const WORKER_HEAP_MB = 512;
// A worker that dies before it is ready (a broken install) is not restarted in a tight loop.
const RESTART_DELAY_MS = 1_000;

interface Job {
  kind: ParseKind;
  raw: ReportBytes;
  done(outcome: Outcome<unknown>): void;
}

interface Slot {
  worker: Worker | null;
  ready: boolean;
  job: Job | null;
  timer: NodeJS.Timeout | null;
  /** When the job was posted (performance.now()). */
  startedAt: number;
}

/**
 * Report parsing off the event loop: a fixed set of worker threads, each parsing one report at a
 * time under a time budget. A report over budget has its worker terminated (the only way to stop
 * a synchronous parse) and replaced; the caller stores it unparsed. Waiting reports are bounded,
 * since each holds up to `inbound.maxSize` bytes.
 */
export async function startParsePool(options: ParsePoolOptions, log: Logger): Promise<ReportParser> {
  const slots: Slot[] = Array.from({ length: options.workers }, () => ({ worker: null, ready: false, job: null, timer: null, startedAt: 0 }));
  const queue: Job[] = [];
  let closing = false;

  const finish = (slot: Slot, outcome: Outcome<unknown>) => {
    const job = slot.job;
    if (slot.timer) clearTimeout(slot.timer);
    slot.job = null;
    slot.timer = null;
    job?.done(outcome);
  };

  const pump = () => {
    for (const slot of slots) {
      if (queue.length === 0) return;
      if (slot.ready && !slot.job) run(slot, queue.shift()!);
    }
  };

  const run = (slot: Slot, job: Job) => {
    slot.job = job;
    slot.startedAt = performance.now();
    // Shared segments cross without a copy; the worker joins them on its own thread.
    slot.worker!.postMessage({ kind: job.kind, segments: job.raw.segments, length: job.raw.length });
    slot.timer = setTimeout(() => {
      log.warn({ phase: 'parse', budget_ms: options.budgetMs, size: job.raw.length }, 'report over its parse time budget; worker replaced');
      replace(slot, { parsed: null, unparsed: 'time_budget' });
    }, options.budgetMs);
  };

  // Ends the slot's worker, answers its job, and starts a fresh worker in its place.
  const replace = (slot: Slot, outcome: Outcome<unknown>, delayMs = 0) => {
    const old = slot.worker;
    slot.worker = null;
    slot.ready = false;
    finish(slot, outcome);
    if (old) void old.terminate();
    if (closing) return;
    // Nothing waits for a replacement: a worker that fails before it is ready is logged and replaced again.
    if (delayMs === 0) void spawn(slot);
    else setTimeout(() => !closing && void spawn(slot), delayMs).unref();
  };

  // Resolves true once the worker is ready, false when it failed first.
  const spawn = (slot: Slot): Promise<boolean> =>
    new Promise((resolve) => {
      const worker = startWorker(import.meta.url, 'parse-worker', { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
      slot.worker = worker;
      const current = () => slot.worker === worker;
      worker.on('message', (message: unknown) => {
        if (!current()) return;
        if (message === 'ready') {
          slot.ready = true;
          resolve(true);
          pump();
          return;
        }
        // An answer that comes after the budget is over budget too, even if a busy event loop
        // read it before the timer fired: the budget means the same on a loaded machine.
        if (performance.now() - slot.startedAt > options.budgetMs) {
          log.warn({ phase: 'parse', budget_ms: options.budgetMs, size: slot.job?.raw.length }, 'report over its parse time budget');
          finish(slot, { parsed: null, unparsed: 'time_budget' });
        } else {
          finish(slot, message === UNREADABLE ? { parsed: null, unparsed: 'unreadable' } : { parsed: message, unparsed: null });
        }
        pump();
      });
      worker.on('error', (err) => {
        if (!current()) return;
        log.error({ phase: 'parse', err }, 'report parser worker failed; replaced');
        replace(slot, { parsed: null, unparsed: 'worker_failed' }, slot.ready ? 0 : RESTART_DELAY_MS);
        resolve(false);
      });
      worker.on('exit', (code) => {
        if (!current()) return;
        log.error({ phase: 'parse', code }, 'report parser worker exited; replaced');
        replace(slot, { parsed: null, unparsed: 'worker_failed' }, slot.ready ? 0 : RESTART_DELAY_MS);
        resolve(false);
      });
    });

  const submit = <T>(kind: ParseKind, raw: ReportBytes): Promise<Outcome<T>> => {
    if (closing) return Promise.resolve({ parsed: null, unparsed: 'worker_failed' });
    return new Promise((resolve, reject) => {
      const job: Job = { kind, raw, done: (outcome) => resolve(outcome as Outcome<T>) };
      const idle = slots.find((s) => s.ready && !s.job);
      if (idle && queue.length === 0) return run(idle, job);
      if (queue.length >= options.maxQueued) return reject(new ParseQueueFull());
      queue.push(job);
    });
  };

  const pool: ReportParser = {
    parse: (raw) => submit<ParsedReport>('report', raw),
    parseMail: (raw) => submit<ReceivedMail>('mail', raw),
    async close() {
      closing = true;
      for (const job of queue.splice(0)) job.done({ parsed: null, unparsed: 'worker_failed' });
      const workers = slots.map((s) => s.worker).filter((w): w is Worker => w !== null);
      for (const slot of slots) {
        slot.worker = null;
        finish(slot, { parsed: null, unparsed: 'worker_failed' });
      }
      await Promise.all(workers.map((w) => w.terminate()));
    },
  };
  if (!(await Promise.all(slots.map(spawn))).every(Boolean)) {
    await pool.close();
    throw new Error('The report parser worker threads did not start (see the errors logged above)');
  }
  return pool;
}
