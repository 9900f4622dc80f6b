import type { Db } from './db.ts';

class RolledBack extends Error {}

/**
 * Proves the database takes writes without leaving a trace: creates a table, inserts a row and
 * rolls both back. Throws the database's own error when it cannot.
 */
export async function probeWrite(db: Db): Promise<void> {
  try {
    await db.transaction(async (trx) => {
      await trx.schema.createTable('doctor_probe', (t) => t.integer('id'));
      await trx('doctor_probe').insert({ id: 1 });
      throw new RolledBack();
    });
  } catch (err) {
    if (!(err instanceof RolledBack)) throw err;
  }
}
