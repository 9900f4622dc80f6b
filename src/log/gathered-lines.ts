/** Where gathered lines go: pino's stderr destination. */
export interface LineSink {
  write(text: string): unknown;
}

/** Those with lines waiting: the process's exit writes them (one hook, however many loggers). */
const waitingAtExit = new Set<GatheredLines>();
process.once('exit', () => {
  for (const lines of waitingAtExit) lines.flush();
});

/**
 * Log lines gathered while they come close together: a write of stderr for each line (two a
 * relayed message) cost the event loop more than the line itself. A line after a quiet spell is
 * written at once, and so is every line until `gatherFromNowOn` (start-up keeps its order beside
 * the console's own text); after it, a line within `lingerMs` of the last write waits for company,
 * up to `maxBytes` or `lingerMs`. What is waiting is written when the process exits
 * (`process.exit`, a signal handled, an uncaught error); a process killed outright loses at most
 * those lines.
 */
export class GatheredLines {
  private waiting = '';
  private timer: NodeJS.Timeout | null = null;
  private lastWrite = Number.NEGATIVE_INFINITY;
  private gathering = false;

  constructor(
    private readonly sink: LineSink,
    private readonly now: () => number = Date.now,
    private readonly lingerMs = 100,
    private readonly maxBytes = 4096,
  ) {}

  /** Lines written from now on may wait for company (the server is up). */
  gatherFromNowOn(): void {
    this.gathering = true;
  }

  write(line: string): void {
    const now = this.now();
    if (this.waiting === '' && (!this.gathering || now - this.lastWrite >= this.lingerMs)) {
      this.lastWrite = now;
      this.sink.write(line);
      return;
    }
    this.waiting += line;
    waitingAtExit.add(this);
    if (this.waiting.length >= this.maxBytes) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.lingerMs).unref();
  }

  /** Writes what is waiting; pino's `logger.flush(cb)` calls it. */
  flush(done?: () => void): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.waiting !== '') {
      this.lastWrite = this.now();
      this.sink.write(this.waiting);
      this.waiting = '';
      waitingAtExit.delete(this);
    }
    done?.();
  }
}
