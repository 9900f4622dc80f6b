import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Brings dist/ up to date before any test spawns bin/mailsvc, so each spawned CLI or server
 * starts from the ahead-of-time build instead of compiling TypeScript (seconds per spawn on a
 * loaded machine). bin/mailsvc itself refuses a build older than src/, so a test never runs
 * stale code, whether or not this step ran.
 */
export default function buildOnce(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL('../bin/build.mjs', import.meta.url)), '--if-stale'], { stdio: 'inherit' });
}
