import { open } from 'node:fs/promises';

/**
 * Durable SQLite commits without holding the event loop. The connection runs
 * `synchronous=NORMAL`: a commit writes its WAL frames but does not fsync them. The commit's
 * caller then waits here for an fdatasync of the WAL file, which runs on libuv's thread pool
 * while the event loop goes on parsing requests and sessions. Nothing is answered before its
 * commit is on disk, the guarantee of `synchronous=FULL`, whose fsync would block the process.
 *
 * Commits that end while a sync is running share the next one: that running sync may have
 * started before their frames were written.
 */
let completed = 0;

/** WAL syncs this process has completed, on every database. */
export const walSyncsCompleted = (): number => completed;

export class WalSync {
  private running: Promise<void> | null = null;
  private waiting: Promise<void> | null = null;

  constructor(private readonly walFile: string, private readonly dbFile: string) {}

  /** Resolves once everything written to the WAL before the call is on disk. */
  durable(): Promise<void> {
    if (this.waiting) return this.waiting;
    if (!this.running) return this.begin();
    this.waiting = this.running.then(
      () => this.begin(),
      () => this.begin(),
    );
    return this.waiting;
  }

  private begin(): Promise<void> {
    this.waiting = null;
    const run = this.sync().finally(() => {
      if (this.running === run) this.running = null;
    });
    this.running = run;
    return run;
  }

  /**
   * Opened anew each time: SQLite removes the WAL file when its last connection closes and
   * creates another later, so a handle kept open could point at a file nobody writes any more.
   */
  private async sync(): Promise<void> {
    const handle = await open(this.walFile, 'r').catch((err: NodeJS.ErrnoException) => {
      // No WAL yet means the write went to the database file itself.
      if (err.code === 'ENOENT') return open(this.dbFile, 'r');
      throw err;
    });
    try {
      await handle.datasync();
      completed += 1;
    } finally {
      await handle.close();
    }
  }
}
