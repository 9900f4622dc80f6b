import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * The databases a storage or API test runs on: always a real SQLite file, plus PostgreSQL when
 * MAILSVC_TEST_PG_URL is set (each test gets a scratch database of its own).
 */
export type StoreKind = 'sqlite' | 'pg';

export const STORES: StoreKind[] = process.env.MAILSVC_TEST_PG_URL ? ['sqlite', 'pg'] : ['sqlite'];

export interface ScratchStore {
  kind: StoreKind;
  /** Config overrides pointing at the scratch database (and a scratch dataDir). */
  config: { dataDir: string; database: { client: 'sqlite'; connection: null } | { client: 'pg'; connection: string } };
  dataDir: string;
  drop(): Promise<void>;
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.MAILSVC_TEST_PG_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function scratchStore(kind: StoreKind): Promise<ScratchStore> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mailsvc-test-'));
  if (kind === 'sqlite') {
    return {
      kind,
      dataDir,
      config: { dataDir, database: { client: 'sqlite', connection: null } },
      drop: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const name = `mailsvc_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(process.env.MAILSVC_TEST_PG_URL!);
  url.pathname = `/${name}`;
  return {
    kind,
    dataDir,
    config: { dataDir, database: { client: 'pg', connection: url.toString() } },
    drop: async () => {
      rmSync(dataDir, { recursive: true, force: true });
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}
