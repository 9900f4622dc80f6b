import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import type PgModule from 'pg';
import { ensurePrivateDir, ensurePrivateFile, restrictIfPresent } from '../config/dataDir.ts';
import type { Config } from '../config/schema.ts';
import { WalSync } from './wal-sync.ts';

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
    return knexFactory({
      client: 'pg',
      connection: database.connection,
      pool: {
        min: 0,
        max: database.pool,
        // PostgreSQL compiles a statement whose estimated cost passes jit_above_cost. A claim behind
        // a backlog of 100,000 due rows is estimated that high while it reads a few hundred rows:
        // compiling took 60 ms of its 62. Nothing here runs long enough to gain from it.
        afterCreate(conn: { query(sql: string, done: (err: Error | null) => void): void }, done: (err: Error | null, conn: unknown) => void) {
          conn.query('SET jit = off', (err) => done(err, conn));
        },
      },
    });
  }
  const file = database.connection.filename;
  // The database holds DKIM private keys and signing secrets. SQLite gives its -wal
  // and -shm files the mode of the database file, so a 0600 database keeps them 0600 too; files
  // left by an earlier, looser version are tightened here.
  ensurePrivateDir(dirname(file));
  ensurePrivateFile(file);
  for (const suffix of ['-wal', '-shm', '-journal']) restrictIfPresent(`${file}${suffix}`);
  return knexFactory({
    client: statementReusingClient(),
    connection: { filename: database.connection.filename },
    useNullAsDefault: true,
    pool: {
      afterCreate(conn: { pragma(sql: string): unknown }, done: (err: Error | null, conn: unknown) => void) {
        // WAL with synchronous=NORMAL, and each commit waits for its WAL sync off the event
        // loop (WalSync): a commit is on disk before we answer 201 or 250.
        conn.pragma('journal_mode = WAL');
        conn.pragma('synchronous = NORMAL');
        conn.pragma('foreign_keys = ON');
        conn.pragma('busy_timeout = 10000');
        // Savepoint journals and temporary b-trees in memory: each shared commit runs its jobs in
        // savepoints, and a batch's savepoint journal past 64 KB spilled to a file SQLite created,
        // wrote and deleted in /var/tmp, 30 times a second when relaying.
        conn.pragma('temp_store = MEMORY');
        done(null, conn);
      },
    },
  });
}

interface SqliteConnection {
  name: string;
  memory: boolean;
  inTransaction: boolean;
  prepare(sql: string): SqliteStatement;
}
interface SqliteStatement {
  reader: boolean;
  readonly: boolean;
  safeIntegers(on: boolean): void;
  all(params: unknown[]): unknown;
  run(params: unknown[]): { lastInsertRowid: number | bigint; changes: number };
}
interface SqliteQuery {
  sql: string;
  bindings?: unknown[];
  options?: unknown;
  response?: unknown;
  context?: unknown;
}
/** The part of a knex query builder's private state that a compiler reads for LIMIT. */
interface KnexBuilderState {
  _single: { limit?: unknown; skipBinding?: Record<string, unknown> };
}
interface SqliteClient {
  _query(conn: SqliteConnection, obj: SqliteQuery): Promise<SqliteQuery>;
  _formatBindings(bindings: unknown[] | undefined): unknown[];
  _optSafeIntegers(options: unknown): boolean | undefined;
  queryCompiler(builder: KnexBuilderState, formatter: unknown): unknown;
  destroyRawConnection(connection: SqliteConnection): Promise<void>;
}

const STATEMENTS_PER_CONNECTION = 500;

let reusingClient: unknown = null;

const states = new WeakMap<object, ConnectionState>();

function stateOf(connection: SqliteConnection): ConnectionState {
  let state = states.get(connection);
  if (!state) {
    const wal = connection.memory ? null : new WalSync(`${connection.name}-wal`, connection.name);
    states.set(connection, (state = { statements: new Map(), wal, dirty: false }));
  }
  return state;
}

/** The connection's compiled statement for `sql`, the least recently used dropped beyond a bound. */
function statementOf(connection: SqliteConnection, state: ConnectionState, sql: string): SqliteStatement {
  const statements = state.statements;
  let statement = statements.get(sql);
  if (statement) {
    statements.delete(sql);
  } else {
    statement = connection.prepare(sql);
    if (statements.size >= STATEMENTS_PER_CONNECTION) statements.delete(statements.keys().next().value!);
  }
  statements.set(sql, statement);
  return statement;
}

const ROLLBACK = /^\s*rollback\b/i;

/**
 * Knex opens a SQLite transaction with a deferred BEGIN, which takes the write lock only at the
 * transaction's first write. Another process (the CLI beside a running server) may hold it
 * then, and a transaction that has already read cannot wait for it: SQLite fails it at once
 * with SQLITE_BUSY, past `busy_timeout`. Taking the lock at BEGIN waits like any other write.
 */
const KNEX_BEGIN = 'BEGIN;';
const BEGIN_WRITING = 'BEGIN IMMEDIATE;';

/** Statements that wrote nothing when they changed no row (SQLite's triggers are per row). */
const ROW_WRITE = /^\s*(insert|update|delete|replace)\b/i;

/** Per connection: its WAL syncer, and whether the open transaction has written anything. */
interface ConnectionState {
  statements: Map<string, SqliteStatement>;
  wal: WalSync | null;
  dirty: boolean;
}

/**
 * Knex's better-sqlite3 client compiles every query anew (`prepare` was the largest single cost
 * of accepting a message). This subclass keeps the compiled statements of each connection by SQL
 * text, the least recently used dropped beyond a bound, and makes each write durable (`WalSync`)
 * before it returns; queries run exactly as before otherwise.
 * Knex builds a transaction's client from the class, so the class is what must change. Knex does
 * not export its dialect classes: the base class is taken from an instance that never connects.
 */
function statementReusingClient(): typeof knexFactory.Client {
  if (reusingClient) return reusingClient as typeof knexFactory.Client;
  const probe = knexFactory({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true });
  const Base = probe.client.constructor as new (config: unknown) => SqliteClient;
  void probe.destroy();
  class StatementReusingClient extends Base {
    /**
     * A limit is written into the SQL as its number (knex's `skipBinding`; knex has parsed it
     * to an integer). SQLite plans with a bound LIMIT's value, so it marks the statement to be
     * compiled again whenever that parameter is bound, which is on every run: each `.first()`
     * was a fresh compile. Written as a number, a statement is compiled once per distinct limit.
     */
    override queryCompiler(builder: KnexBuilderState, formatter: unknown): unknown {
      const single = builder._single;
      if (typeof single.limit === 'number') single.skipBinding = { ...single.skipBinding, limit: true };
      return super.queryCompiler(builder, formatter);
    }

    override async _query(connection: SqliteConnection, obj: SqliteQuery): Promise<SqliteQuery> {
      if (!obj.sql) throw new Error('The query is empty');
      if (!connection) throw new Error('No connection provided');
      const state = stateOf(connection);
      const sql = obj.sql === KNEX_BEGIN ? BEGIN_WRITING : obj.sql;
      const statement = statementOf(connection, state, sql);
      statement.safeIntegers(this._optSafeIntegers(obj.options) ?? false);
      const bindings = this._formatBindings(obj.bindings);
      let changes: number;
      if (statement.reader) {
        obj.response = statement.all(bindings);
        changes = (obj.response as unknown[]).length;
      } else {
        const response = statement.run(bindings);
        obj.response = response;
        obj.context = { lastID: response.lastInsertRowid, changes: response.changes };
        changes = response.changes;
      }
      // `readonly` is false for statements that may write (an INSERT ... RETURNING is a reader
      // too). An idle server's polls are updates that match no row: they write nothing, and
      // waiting for a WAL sync after them cost ten syncs a second doing nothing.
      if (!statement.readonly && sql !== BEGIN_WRITING && (changes > 0 || !ROW_WRITE.test(sql))) state.dirty = true;
      if (state.dirty && !connection.inTransaction) {
        // A write outside a transaction, or the end of one that wrote: on disk before it returns.
        state.dirty = false;
        if (!ROLLBACK.test(obj.sql)) await state.wal?.durable();
      }
      return obj;
    }

    override async destroyRawConnection(connection: SqliteConnection): Promise<void> {
      // The WAL handle goes first: closing the last connection removes the WAL file.
      await states.get(connection)?.wal?.close();
      states.delete(connection);
      return super.destroyRawConnection(connection);
    }
  }
  reusingClient = StatementReusingClient;
  return StatementReusingClient as unknown as typeof knexFactory.Client;
}

export const isPg = (db: Conn): boolean => db.client.config.client === 'pg';

/**
 * Whether the database has a single writer: SQLite, written by one process, one transaction at
 * a time. What the composition root wires by: with one writer, one committer serves every
 * write and rate-limit counts can be kept in memory (no other process counts); PostgreSQL, shared
 * by processes and committing side by side, needs neither restraint nor shortcut.
 */
export const singleWriter = (db: Conn): boolean => !isPg(db);

/** Whether `conn` is a transaction rather than the database itself. */
export const inTransaction = (conn: Conn): conn is Tx => (conn as { isTransaction?: boolean }).isTransaction === true;

/**
 * How many group-commit transactions may run side by side: one, on both databases. SQLite has
 * one writer. On PostgreSQL, shared batches lock the message rows of their jobs in whatever
 * order the jobs arrived, so two batches side by side deadlock whenever they touch the same two
 * messages in opposite orders; each deadlock costs `deadlock_timeout` (1 s) before the server
 * breaks it, and a job that loses three times fails. Side by side lanes did that in a single
 * process (found by the sandbox tests on PostgreSQL).
 */
export const commitLanes = (_database: Config['database']): number => 1;

/** A write built and not yet run (`tx('t').insert(...)`, not awaited). */
export type Statement = Knex.QueryBuilder;

/** PostgreSQL takes at most 65,535 parameters in one statement; keep well under it. */
const MAX_PARAMETERS = 30_000;

/**
 * Writes that need nothing back, in as few round trips as PostgreSQL allows: the data-modifying
 * WITH clauses of one statement while their parameters fit. Foreign keys are checked at the end
 * of that statement, so a row may reference one inserted beside it; the clauses take their row
 * locks in no set order, so the caller gives at most one write that another process's commit
 * could also lock. On SQLite (no round trips to save) they run one by one, in order.
 */
export async function runTogether(tx: Tx, statements: Statement[]): Promise<void> {
  if (!isPg(tx)) {
    for (const statement of statements) await statement;
    return;
  }
  for (const one of combined(statements)) await tx.raw(one.sql, one.bindings);
}

/**
 * `read`'s rows, with `writes` sent ahead of it in the same statement on PostgreSQL (as the
 * data-modifying WITH clauses of the read, which run whether or not it uses them); on SQLite,
 * and when the parameters do not fit one statement, the writes run first. The read must not
 * depend on the writes: on PostgreSQL it does not see their effects.
 */
export async function readAfter<T>(tx: Tx, writes: Statement[], read: Knex.QueryBuilder): Promise<T[]> {
  const together = isPg(tx) && writes.length > 0 ? combined([...writes, read]) : [];
  if (together.length === 1) return ((await tx.raw(together[0]!.sql, together[0]!.bindings)) as { rows: T[] }).rows;
  await runTogether(tx, writes);
  return (await read) as T[];
}

/**
 * `statements` committed all or none, outside any transaction: on PostgreSQL as one statement
 * when they fit in one (a statement is atomic on its own: no BEGIN and COMMIT round trips),
 * otherwise, and on SQLite, in a transaction of their own.
 */
export async function runAtomically(db: Db, statements: Statement[]): Promise<void> {
  const together = isPg(db)
    ? combined(statements)
    : statements.map((s) => {
        const { sql, bindings } = s.toSQL();
        return { sql, bindings: [...bindings] as Knex.RawBinding[] };
      });
  if (together.length === 1) await db.raw(together[0]!.sql, together[0]!.bindings);
  else if (together.length > 1) {
    await db.transaction(async (tx) => {
      for (const one of together) await tx.raw(one.sql, one.bindings);
    });
  }
}

/** The statements as the WITH clauses of as few statements as their parameters allow. */
function combined(statements: Statement[]): { sql: string; bindings: Knex.RawBinding[] }[] {
  const out: { sql: string; bindings: Knex.RawBinding[] }[] = [];
  let group: { sql: string; bindings: readonly unknown[] }[] = [];
  let parameters = 0;
  const flush = () => {
    if (group.length === 0) return;
    const last = group[group.length - 1]!;
    const clauses = group.slice(0, -1).map((g, i) => `w${i} as (${g.sql})`);
    out.push({ sql: clauses.length === 0 ? last.sql : `with ${clauses.join(', ')} ${last.sql}`, bindings: group.flatMap((g) => g.bindings) as Knex.RawBinding[] });
    group = [];
    parameters = 0;
  };
  for (const statement of statements) {
    const { sql, bindings } = statement.toSQL();
    if (parameters + bindings.length > MAX_PARAMETERS) flush();
    group.push({ sql, bindings });
    parameters += bindings.length;
  }
  flush();
  return out;
}

/** The id from `insert(...).returning('id')`: PostgreSQL gives `{id}`, SQLite the bare value. */
/** Insert statements by table, columns and row count: their SQL text is built once. */
const insertSql = new Map<string, string>();

/**
 * Inserts rows of the same columns in one statement whose SQL text is built once per shape:
 * knex's builder re-quotes every column of every row on each call, a tenth of the time of
 * accepting a batch of messages. Values are bound as they are (null for undefined).
 */
export async function insertRows(conn: Conn, table: string, rows: Record<string, unknown>[]): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]!);
  const shape = `${table}\0${columns.join('\0')}\0${rows.length}`;
  let sql = insertSql.get(shape);
  if (sql === undefined) {
    const tuple = `(${columns.map(() => '?').join(', ')})`;
    sql = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values ${Array.from({ length: rows.length }, () => tuple).join(', ')}`;
    if (insertSql.size >= 1000) insertSql.clear();
    insertSql.set(shape, sql);
  }
  const bindings: Knex.RawBinding[] = [];
  for (const row of rows) {
    if (Object.keys(row).length !== columns.length) throw new Error(`rows inserted into ${table} together must have the same columns`);
    for (const c of columns) bindings.push((row[c] ?? null) as Knex.RawBinding);
  }
  if (!isPg(conn) && inTransaction(conn)) {
    // Inside a SQLite transaction the statement runs on the transaction's connection directly:
    // knex's query pipeline scans every one of a 100-row insert's bindings several times over.
    const connection = (await (conn.client as { acquireConnection(): Promise<SqliteConnection> }).acquireConnection()) as SqliteConnection;
    const state = stateOf(connection);
    statementOf(connection, state, sql).run((conn.client as unknown as SqliteClient)._formatBindings(bindings));
    state.dirty = true;
    return;
  }
  await conn.raw(sql, bindings);
}

export const insertedId = (row: unknown): number => (typeof row === 'object' && row !== null ? (row as { id: number }).id : (row as number));

/** SQLite returns 0/1 for booleans. */
export const bool = (v: unknown): boolean => v === true || v === 1 || v === '1';

/** Whether the database answers at all. */
export async function ping(db: Conn): Promise<void> {
  await db.raw('select 1');
}

const SQLITE_SYNCHRONOUS = ['off', 'normal', 'full', 'extra'];

/**
 * The durability a commit on this connection (or transaction's connection) gets: PostgreSQL's
 * `synchronous_commit` (off, local, on...); SQLite's `synchronous` (off, normal, full, extra),
 * where `normal` with this client's WAL sync after every commit gives what `full` does.
 */
export async function durability(db: Conn): Promise<string> {
  if (isPg(db)) {
    const { rows } = await db.raw('show synchronous_commit');
    return String(rows[0].synchronous_commit);
  }
  const rows: { synchronous: number }[] = await db.raw('pragma synchronous');
  const level = SQLITE_SYNCHRONOUS[rows[0].synchronous] ?? String(rows[0].synchronous);
  return level === 'normal' && db.client instanceof statementReusingClient() ? 'full' : level;
}
