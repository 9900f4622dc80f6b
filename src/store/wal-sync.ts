import { open } from 'node:fs/promises';
import { Batcher } from '../core/batcher.ts';

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
  /** One sync at a time; callers that arrive during one wait for the next, all together. */
  private readonly syncs = new Batcher<void, void>({
    name: 'the WAL sync',
    maxInFlight: 1,
    write: async (batch) => {
      // Taken before the sync starts: a caller arriving during it may have written after it began.
      const waiting = batch.take();
      await this.sync();
      return waiting.map(() => undefined);
    },
  });

  constructor(
    private readonly walFile: string,
    private readonly dbFile: string,
  ) {}

  /** Resolves once everything written to the WAL before the call is on disk. */
  durable(): Promise<void> {
    return this.syncs.add();
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
