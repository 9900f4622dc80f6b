/**
 * When a batch starts after it opens: `now` (in the same call), `microtask`, `immediate`
 * (after the I/O already read, so a busy process gathers what arrived meanwhile), or a delay in
 * milliseconds.
 */
export type BatchStart = 'now' | 'microtask' | 'immediate' | number;

/** The answer `add` gets once the batcher is closed. */
export class BatcherClosedError extends Error {
  constructor(what: string) {
    super(`${what} is shutting down; nothing was written`);
    this.name = 'BatcherClosedError';
  }
}

interface Entry<I, R> {
  input: I;
  settled: boolean;
  resolve(value: R): void;
  reject(error: unknown): void;
}

/** What a writer may return: one result per item taken, in order, or nothing if it settled each. */
export type BatchWriter<I, R> = (batch: Batch<I, R>) => Promise<R[] | void>;

export interface BatcherOptions<I, R> {
  /** Named in errors: "the accepting queue is shutting down". */
  name: string;
  write: BatchWriter<I, R>;
  /** Items one batch takes at most; more wait for the next batch. */
  maxBatch?: number;
  /** Batches written at once; an item that arrives while all are busy waits for the next. */
  maxInFlight?: number;
  /** When a batch starts; told whether it opened as another ended with items left (busy). */
  start?: BatchStart | ((busy: boolean) => BatchStart);
  /**
   * When a batch of several fails as a whole, each item not yet answered is written again in a
   * batch of its own, so one bad item costs only itself. Otherwise they all get the error.
   */
  retryAlone?: boolean;
}

/**
 * One batch of a `Batcher`. Its items are taken from the queue when the writer first asks for
 * them (`take`), not when the batch opened: a writer that waits for a shared commit gets
 * everything that arrived meanwhile. Taken once: a writer run again (a lost lock conflict) gets
 * the same items.
 */
export class Batch<I, R> {
  private entries: Entry<I, R>[] | null;

  constructor(
    private readonly from: (() => Entry<I, R>[]) | null,
    fixed: Entry<I, R>[] | null = null,
  ) {
    this.entries = fixed;
  }

  /** The items of this batch, in the order they were added. */
  take(): I[] {
    return this.taken().map((e) => e.input);
  }

  /** Answers the item at `index` of `take()` alone (a writer that streams its results). */
  resolve(index: number, value: R): void {
    settle(this.taken()[index], true, value);
  }

  reject(index: number, error: unknown): void {
    settle(this.taken()[index], false, error);
  }

  /** The entries, taken now if the writer never asked for them (the batcher settles them). */
  taken(): Entry<I, R>[] {
    this.entries ??= this.from!();
    return this.entries;
  }
}

function settle<I, R>(entry: Entry<I, R> | undefined, ok: boolean, value: unknown): void {
  if (!entry || entry.settled) return;
  entry.settled = true;
  if (ok) entry.resolve(value as R);
  else entry.reject(value);
}

const nothingFor = (name: string) => new Error(`${name} ended a batch without an answer for this item`);

/**
 * The one way work is batched here: items are queued, a writer is called once per batch, and
 * every item is settled on every path, whatever the writer does:
 * - it answers each item taken, or returns one result per item in order;
 * - it returns without answering some: those are rejected (a defect, not a hang);
 * - it throws, before or after taking its items (a commit that could not even open): every item
 *   of its batch not yet answered is rejected, or written again alone (`retryAlone`);
 * - the process closes: `close` writes what is queued and waits for it; `add` after it is
 *   refused at once.
 * A batch opens when an item arrives and no batch is open, while fewer than `maxInFlight` run.
 */
export class Batcher<I, R> {
  private queue: Entry<I, R>[] = [];
  /** The batch that has opened and not yet taken its items. */
  private open: Batch<I, R> | null = null;
  private inFlight = 0;
  private closed = false;
  private idle: (() => void)[] = [];
  private readonly maxBatch: number;
  private readonly maxInFlight: number;

  constructor(private readonly options: BatcherOptions<I, R>) {
    this.maxBatch = options.maxBatch ?? Infinity;
    this.maxInFlight = options.maxInFlight ?? Infinity;
  }

  add(input: I): Promise<R> {
    if (this.closed) return Promise.reject(new BatcherClosedError(this.options.name));
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ input, settled: false, resolve, reject });
      this.pump(false);
    });
  }

  /** Items queued and not yet taken by a batch. */
  get queued(): number {
    return this.queue.length;
  }

  /** Refuses new items, then resolves once every queued and running batch has settled. */
  close(): Promise<void> {
    this.closed = true;
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** Refuses new items and rejects those not yet taken by a batch with `error`. */
  abort(error: Error): void {
    this.closed = true;
    const dropped = this.queue;
    this.queue = [];
    for (const entry of dropped) settle(entry, false, error);
    this.checkIdle();
  }

  private pump(busy: boolean): void {
    if (this.open || this.queue.length === 0 || this.inFlight >= this.maxInFlight) return;
    const batch: Batch<I, R> = new Batch<I, R>((): Entry<I, R>[] => this.takeFor(batch));
    this.open = batch;
    this.inFlight += 1;
    const start = typeof this.options.start === 'function' ? this.options.start(busy) : (this.options.start ?? 'now');
    if (start === 'now') void this.run(batch);
    else if (start === 'microtask') void Promise.resolve(batch).then(this.runLater);
    else if (start === 'immediate') setImmediate(this.runLater, batch);
    else setTimeout(this.runLater, start, batch);
  }

  /**
   * `run` for a later start, made once: a closure made per batch would have its optimised code
   * dropped at every full collection on Node 20 and compiled again (bench/NOTES.md).
   */
  private readonly runLater = (batch: Batch<I, R>): void => void this.run(batch);

  private takeFor(batch: Batch<I, R>): Entry<I, R>[] {
    const entries = this.queue.splice(0, this.maxBatch);
    if (this.open === batch) this.open = null;
    this.pump(false);
    return entries;
  }

  private async run(batch: Batch<I, R>): Promise<void> {
    try {
      await this.write(batch, this.options.retryAlone ?? false);
    } finally {
      this.inFlight -= 1;
      // A batch that never took its items leaves them queued for the next one.
      if (this.open === batch) this.open = null;
      this.pump(this.queue.length > 0);
      this.checkIdle();
    }
  }

  /** Runs the writer on `batch` and settles every one of its items. */
  private async write(batch: Batch<I, R>, retryAlone: boolean): Promise<void> {
    let results: R[] | void;
    try {
      results = await this.options.write(batch);
    } catch (error) {
      const open = batch.taken().filter((e) => !e.settled);
      if (retryAlone && batch.taken().length > 1) {
        await Promise.all(open.map((entry) => this.write(new Batch<I, R>(null, [entry]), false)));
      } else {
        for (const entry of open) settle(entry, false, error);
      }
      return;
    }
    const entries = batch.taken();
    if (results) for (let i = 0; i < entries.length && i < results.length; i++) settle(entries[i], true, results[i]);
    for (const entry of entries) if (!entry.settled) settle(entry, false, nothingFor(this.options.name));
  }

  private isIdle(): boolean {
    return this.queue.length === 0 && this.inFlight === 0;
  }

  private checkIdle(): void {
    if (!this.isIdle()) return;
    const waiting = this.idle;
    this.idle = [];
    for (const resolve of waiting) resolve();
  }
}
