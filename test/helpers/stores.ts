import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { adminQuery, databaseUrl } from './templates.ts';

/**
 * The databases a storage or API test runs on: always a real SQLite file, plus PostgreSQL when
 * MAILSVC_TEST_PG_URL is set (each test gets a scratch database of its own, a copy of the run's
 * migrated template, or empty with `empty`; on SQLite, a copy of the migrated file in the store's
 * dataDir, where the config puts the database).
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

export async function scratchStore(kind: StoreKind, options: { empty?: boolean } = {}): Promise<ScratchStore> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mailsvc-test-'));
  if (kind === 'sqlite') {
    if (!options.empty) copyFileSync(inject('sqliteTemplate'), join(dataDir, 'mailsvc.sqlite'));
    return {
      kind,
      dataDir,
      config: { dataDir, database: { client: 'sqlite', connection: null } },
      drop: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const name = `mailsvc_test_${randomBytes(6).toString('hex')}`;
  const template = options.empty ? null : inject('pgTemplate');
  await adminQuery(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  return {
    kind,
    dataDir,
    config: { dataDir, database: { client: 'pg', connection: databaseUrl(name) } },
    drop: async () => {
      rmSync(dataDir, { recursive: true, force: true });
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}
