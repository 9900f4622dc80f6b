import { inTransaction, isPg, type Conn, type Tx } from './db.ts';

/**
 * SQLite's subject search index (`message_subjects`, FTS5 with the trigram tokenizer) is written
 * in batches, not as each message is inserted (migration 025). FTS5 writes a segment of its own
 * for every statement that adds to it and merges those segments as they pile up: indexed one
 * commit at a time (about seven messages on a busy relay), each stored message cost 0.022 ms of
 * CPU and 1.5 WAL frames; a thousand at a time, 0.005 ms and 0.1 frames (`npm run bench --
 * subject-index`).
 *
 * `message_subjects_upto` holds the largest message id indexed. Message ids only grow (SQLite
 * has one writer and never reuses an id), so the messages after it are exactly the ones still to
 * index. The delete trigger removes only messages at or below it from the index.
 */
export const subjectIndex = {
  /** Whether messages wait to be indexed; read without a lock, so only a hint. */
  async pending(db: Conn): Promise<boolean> {
    if (isPg(db)) return false;
    const [row] = (await db.raw('select (select max(id) from messages) > (select id from message_subjects_upto) as pending')) as { pending: number | null }[];
    return row?.pending === 1;
  },
  /**
   * Indexes up to `limit` messages not indexed yet, oldest first, in the caller's write
   * transaction; returns how many. Reading the mark and moving it in one transaction keeps two
   * writers (the server, a CLI command) from indexing a message twice.
   */
  async indexPending(tx: Tx, limit = 5_000): Promise<number> {
    if (isPg(tx)) return 0;
    if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`A subject index batch must be a positive whole number, not ${limit}`);
    const [{ upto }] = (await tx.raw('select id as upto from message_subjects_upto')) as { upto: number }[];
    const [{ last, count }] = (await tx.raw(`select max(id) as last, count(*) as count from (select id from messages where id > ? order by id limit ${limit})`, [
      upto,
    ])) as { last: number | null; count: number }[];
    if (last === null) return 0;
    await tx.raw('insert into message_subjects (rowid, subject) select id, subject from messages where id > ? and id <= ?', [upto, last]);
    await tx.raw('update message_subjects_upto set id = ?', [last]);
    return Number(count);
  },
  /**
   * Indexes every message still waiting, before a subject search reads the index, so a search
   * finds a message the moment it is stored. Costs nothing when none waits.
   */
  async catchUp(conn: Conn): Promise<void> {
    if (isPg(conn) || !(await subjectIndex.pending(conn))) return;
    const all = async (tx: Tx) => {
      while ((await subjectIndex.indexPending(tx)) > 0);
    };
    await (inTransaction(conn) ? all(conn) : conn.transaction(all));
  },
};
