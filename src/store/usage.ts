import type { Conn } from './db.ts';

export interface UsageRow {
  day: string;
  stream: string;
  count: number;
}

export const usageRepo = {
  async add(db: Conn, workspaceId: number, day: string, stream: string, count: number): Promise<void> {
    if (count <= 0) return;
    await db('usage_daily')
      .insert({ workspace_id: workspaceId, day, stream, count })
      .onConflict(['workspace_id', 'day', 'stream'])
      .merge({ count: db.raw('usage_daily.count + ?', [count]) });
  },
  list: (db: Conn, workspaceId: number, from: string, to: string): Promise<UsageRow[]> =>
    db('usage_daily')
      .where({ workspace_id: workspaceId })
      .andWhere('day', '>=', from)
      .andWhere('day', '<=', to)
      .orderBy([{ column: 'day' }, { column: 'stream' }])
      .select('day', 'stream', 'count'),
};
