/**
 * One entry point for the benches: `npm run bench -- <name> [args...]` runs bench/<name>.ts.
 * Each bench starts and stops everything it needs and prints one summary line at the end.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const names = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && f !== 'setup.ts')
  .map((f) => f.slice(0, -3))
  .sort();
const [name, ...args] = process.argv.slice(2);
if (!name || !existsSync(join(here, `${name}.ts`)) || name === 'run' || name === 'setup') {
  console.error(`usage: npm run bench -- <name> [args...]\nbenches: ${names.join(', ')}`);
  process.exit(2);
}
const result = spawnSync(process.execPath, ['--import', 'tsx', join(here, `${name}.ts`), ...args], { stdio: 'inherit' });
process.exit(result.status ?? 1);
