import { open, type FileHandle } from 'node:fs/promises';

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
  /** The WAL file, open from its first sync until `close`. */
  private wal: FileHandle | null = null;
  private closed = false;

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

  /** With the connection: the WAL file may go once the last connection is closed. */
  async close(): Promise<void> {
    this.closed = true;
    await this.running?.catch(() => undefined);
    const wal = this.wal;
    this.wal = null;
    await wal?.close();
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
   * The WAL file stays open while its connection is: SQLite removes the file only when its last
   * connection closes, and resets it in place at checkpoints, so the handle keeps naming the file
   * SQLite writes. Opening it for every sync cost the event loop five times as much.
   */
  private async sync(): Promise<void> {
    if (!this.wal && !this.closed) {
      this.wal = await open(this.walFile, 'r').catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return null;
        throw err;
      });
    }
    if (this.wal) {
      await this.wal.datasync();
    } else {
      // No WAL yet means the write went to the database file itself.
      const db = await open(this.dbFile, 'r');
      try {
        await db.datasync();
      } finally {
        await db.close();
      }
    }
    completed += 1;
  }
}
