import { close, fdatasync, open } from 'node:fs';
import { promisify } from 'node:util';
import { Batcher } from '../core/batcher.ts';

const openFile = promisify(open);
const closeFile = promisify(close);
const datasync = promisify(fdatasync);

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

  /**
   * The WAL file, opened at the first sync and kept until `close`: SQLite removes the file only
   * when its last connection closes, so while the connection this serves is open the handle
   * names the file it writes. One trip to the thread pool per sync instead of three.
   */
  private wal: number | null = null;

  constructor(
    private readonly walFile: string,
    private readonly dbFile: string,
  ) {}

  /** Resolves once everything written to the WAL before the call is on disk. */
  durable(): Promise<void> {
    return this.syncs.add();
  }

  /** The connection is closing: waits for the syncs under way, then lets the WAL file go. */
  async close(): Promise<void> {
    await this.syncs.close();
    if (this.wal === null) return;
    const fd = this.wal;
    this.wal = null;
    await closeFile(fd);
  }

  private async sync(): Promise<void> {
    this.wal ??= await openIfPresent(this.walFile);
    // No WAL yet means the write went to the database file itself.
    if (this.wal === null) await syncOnce(this.dbFile);
    else await datasync(this.wal);
    completed += 1;
  }
}

async function openIfPresent(file: string): Promise<number | null> {
  try {
    return await openFile(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

async function syncOnce(file: string): Promise<void> {
  const fd = await openFile(file, 'r');
  try {
    await datasync(fd);
  } finally {
    await closeFile(fd);
  }
}
