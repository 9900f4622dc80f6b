import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { createPgTemplate, createSqliteTemplate } from './helpers/templates.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated database each PostgreSQL scratch database is copied from; null without PostgreSQL. */
    pgTemplate: string | null;
    /** The migrated SQLite file each SQLite scratch store is copied from. */
    sqliteTemplate: string;
  }
}

/**
 * Brings dist/ up to date before any test spawns bin/mailsvc, so each spawned CLI or server
 * starts from the ahead-of-time build instead of compiling TypeScript (seconds per spawn on a
 * loaded machine). bin/mailsvc itself refuses a build older than src/, so a test never runs
 * stale code, whether or not this step ran. Migrates the run's template databases: a SQLite file,
 * and one on PostgreSQL when it is there.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  execFileSync(process.execPath, [fileURLToPath(new URL('../bin/build.mjs', import.meta.url)), '--if-stale'], { stdio: 'inherit' });
  const template = process.env.MAILSVC_TEST_PG_URL ? await createPgTemplate() : null;
  project.provide('pgTemplate', template?.name ?? null);
  const sqlite = await createSqliteTemplate();
  project.provide('sqliteTemplate', sqlite.file);
  return async () => {
    await template?.drop();
    await sqlite.drop();
  };
}
