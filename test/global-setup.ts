import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { createPgTemplate } from './helpers/pg-template.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated database each PostgreSQL scratch database is copied from; null without PostgreSQL. */
    pgTemplate: string | null;
  }
}

/**
 * Brings dist/ up to date before any test spawns bin/mailsvc, so each spawned CLI or server
 * starts from the ahead-of-time build instead of compiling TypeScript (seconds per spawn on a
 * loaded machine). bin/mailsvc itself refuses a build older than src/, so a test never runs
 * stale code, whether or not this step ran. With PostgreSQL, migrates the run's template database.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  execFileSync(process.execPath, [fileURLToPath(new URL('../bin/build.mjs', import.meta.url)), '--if-stale'], { stdio: 'inherit' });
  const template = process.env.MAILSVC_TEST_PG_URL ? await createPgTemplate() : null;
  project.provide('pgTemplate', template?.name ?? null);
  return async () => {
    await template?.drop();
  };
}
