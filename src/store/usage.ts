import { randomInt } from 'node:crypto';
import { isPg, type Conn, type Statement } from './db.ts';

export interface UsageRow {
  day: string;
  stream: string;
  count: number;
}

/**
 * Rows a workspace's count of one day and stream is spread over on PostgreSQL (migration 011).
 * Each process adds to one row of its own choosing, so processes committing at once mostly
 * take different rows' locks. One row per process, not per call: a commit whose jobs added to
 * several rows of one counter could take them in an order another commit takes the other way.
 */
const USAGE_SLOTS = 16;
const PROCESS_SLOT = randomInt(USAGE_SLOTS);

export const usageRepo = {
  /** Adds `count` to a day's counter, as a statement not yet run (to send with other writes), or null when there is nothing to add. */
  addition(db: Conn, workspaceId: number, day: string, stream: string, count: number): Statement | null {
    if (count <= 0) return null;
    // SQLite has one writer: nothing to spread.
    const slot = isPg(db) ? PROCESS_SLOT : 0;
    return db('usage_daily')
      .insert({ workspace_id: workspaceId, day, stream, slot, count })
      .onConflict(['workspace_id', 'day', 'stream', 'slot'])
      .merge({ count: db.raw('usage_daily.count + ?', [count]) });
  },
  /**
   * Takes `count` back from a day's counter (canceled mail is not billed). On PostgreSQL it goes
   * to this process's row, which may then hold a negative count: only the sum is read.
   */
  async subtraction(db: Conn, workspaceId: number, day: string, stream: string, count: number): Promise<void> {
    if (count <= 0) return;
    const slot = isPg(db) ? PROCESS_SLOT : 0;
    await db('usage_daily')
      .insert({ workspace_id: workspaceId, day, stream, slot, count: -count })
      .onConflict(['workspace_id', 'day', 'stream', 'slot'])
      .merge({ count: db.raw('usage_daily.count - ?', [count]) });
  },
  async list(db: Conn, workspaceId: number, from: string, to: string): Promise<UsageRow[]> {
    const rows: { day: string; stream: string; count: number | string }[] = await db('usage_daily')
      .where({ workspace_id: workspaceId })
      .andWhere('day', '>=', from)
      .andWhere('day', '<=', to)
      .groupBy('day', 'stream')
      .orderBy([{ column: 'day' }, { column: 'stream' }])
      .select('day', 'stream', db.raw('sum(count) as count'));
    return rows.map((r) => ({ day: r.day, stream: r.stream, count: Number(r.count) }));
  },
};
