import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import type PgModule from 'pg';
import { ensurePrivateDir, ensurePrivateFile, restrictIfPresent } from '../config/dataDir.ts';
import type { Config } from '../config/schema.ts';

export type Db = Knex;
export type Tx = Knex.Transaction;
/** Either the database or a transaction; repositories accept both. */
export type Conn = Knex | Knex.Transaction;

const require = createRequire(import.meta.url);

export function createDb(database: Config['database']): Db {
  if (database.client === 'pg') {
    // Loaded only for PostgreSQL: on SQLite the driver would only cost start-up time.
    const pg = require('pg') as typeof PgModule;
    // Timestamps are stored as bigint milliseconds; node-postgres returns int8 as strings by default.
    pg.types.setTypeParser(20, (v: string) => Number(v));
    return knexFactory({ client: 'pg', connection: database.connection, pool: { min: 0, max: 10 } });
  }
  const file = database.connection.filename;
  // The database holds DKIM private keys and signing secrets. SQLite gives its -wal
  // and -shm files the mode of the database file, so a 0600 database keeps them 0600 too; files
  // left by an earlier, looser version are tightened here.
  ensurePrivateDir(dirname(file));
  ensurePrivateFile(file);
  for (const suffix of ['-wal', '-shm', '-journal']) restrictIfPresent(`${file}${suffix}`);
  return knexFactory({
    client: 'better-sqlite3',
    connection: { filename: database.connection.filename },
    useNullAsDefault: true,
    pool: {
      afterCreate(conn: { pragma(sql: string): unknown }, done: (err: Error | null, conn: unknown) => void) {
        // WAL with synchronous=FULL: a commit is on disk before we answer 201 or 250.
        conn.pragma('journal_mode = WAL');
        conn.pragma('synchronous = FULL');
        conn.pragma('foreign_keys = ON');
        conn.pragma('busy_timeout = 10000');
        done(null, conn);
      },
    },
  });
}

export const isPg = (db: Conn): boolean => db.client.config.client === 'pg';

/** The id from `insert(...).returning('id')`: PostgreSQL gives `{id}`, SQLite the bare value. */
export const insertedId = (row: unknown): number =>
  typeof row === 'object' && row !== null ? (row as { id: number }).id : (row as number);

/** SQLite returns 0/1 for booleans. */
export const bool = (v: unknown): boolean => v === true || v === 1 || v === '1';

/** Whether the database answers at all. */
export async function ping(db: Conn): Promise<void> {
  await db.raw('select 1');
}

const SQLITE_SYNCHRONOUS = ['off', 'normal', 'full', 'extra'];

/**
 * The durability setting in force on this connection (or transaction's connection): SQLite's
 * `synchronous` (off, normal, full, extra), PostgreSQL's `synchronous_commit` (off, local, on...).
 */
export async function durability(db: Conn): Promise<string> {
  if (isPg(db)) {
    const { rows } = await db.raw('show synchronous_commit');
    return String(rows[0].synchronous_commit);
  }
  const rows: { synchronous: number }[] = await db.raw('pragma synchronous');
  return SQLITE_SYNCHRONOUS[rows[0].synchronous] ?? String(rows[0].synchronous);
}
