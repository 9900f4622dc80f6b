import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createDb } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';

/**
 * One migrated database per test run and store, which each test's scratch database is copied
 * from (`CREATE DATABASE ... TEMPLATE` on PostgreSQL, the file on SQLite): copying takes a tenth
 * of what running every migration again takes. The tests of migrations themselves still run them
 * (down, then up again).
 */
export async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.MAILSVC_TEST_PG_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export function databaseUrl(name: string): string {
  const url = new URL(process.env.MAILSVC_TEST_PG_URL!);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Creates and migrates the template; returns its name and how to drop it. */
export async function createPgTemplate(): Promise<{ name: string; drop(): Promise<void> }> {
  const name = `mailsvc_template_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const db = createDb({ client: 'pg', connection: databaseUrl(name), pool: 2 });
  try {
    await migrate(db);
  } finally {
    // A template with a session open cannot be copied.
    await db.destroy();
  }
  return { name, drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** The SQLite file each SQLite scratch store starts from: every migration run once. */
export async function createSqliteTemplate(): Promise<{ file: string; drop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'mailsvc-template-'));
  const file = join(dir, 'mailsvc.sqlite');
  const db = createDb({ client: 'sqlite', connection: { filename: file }, pool: 1 });
  try {
    await migrate(db);
  } finally {
    // The last connection's close folds the WAL into the file, so the file alone is the database.
    await db.destroy();
  }
  return { file, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}
