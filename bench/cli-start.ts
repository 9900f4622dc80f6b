/**
 * CLI start-up: `mailsvc --help` and `mailsvc domain list --json` (a read-only command that opens
 * the database), each run N times as a fresh process, against the reference `node -e 0` measured
 * in the same run. Runs the ahead-of-time build in dist/ (built first if missing or older than
 * src/) and, for comparison, the sources compiled at start through tsx (MAILSVC_FROM_SOURCE=1).
 * Wall-clock per process, from spawn to exit; the minimum is what start-up costs, the median
 * what a loaded machine adds.
 *
 *   npx tsx bench/cli-start.ts [runs=5]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const runs = Number(process.argv[2] ?? 5);
const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'bin/mailsvc');
const dir = mkdtempSync(join(tmpdir(), 'mailsvc-bench-'));
const configFile = join(dir, 'config.json');
writeFileSync(configFile, JSON.stringify({ dataDir: join(dir, 'data'), server: { hostname: 'mail.bench.test' } }));

execFileSync(process.execPath, [join(root, 'bin/build.mjs')], { stdio: 'inherit' });
const env: NodeJS.ProcessEnv = { ...process.env, MAILSVC_NO_LOCAL_CONFIG: '1' };
for (const name of Object.keys(env)) if (name.startsWith('MAILSVC_') && name !== 'MAILSVC_NO_LOCAL_CONFIG') delete env[name];
// The first run creates and migrates the database; it is not measured.
execFileSync(process.execPath, [cli, '--config', configFile, 'domain', 'list', '--json'], { env, stdio: 'ignore' });

function time(args: string[], extraEnv: Record<string, string> = {}): number[] {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const r = spawnSync(process.execPath, args, { env: { ...env, ...extraEnv }, stdio: ['ignore', 'ignore', 'pipe'] });
    times.push(performance.now() - started);
    if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr.toString()}`);
  }
  return times.sort((a, b) => a - b);
}

const row = (name: string, times: number[]) => ({
  command: name,
  min_ms: Math.round(times[0]!),
  median_ms: Math.round(times[Math.floor(times.length / 2)]!),
});
const help = [cli, '--help'];
const list = [cli, '--config', configFile, 'domain', 'list', '--json'];
const fromSource = { MAILSVC_FROM_SOURCE: '1' };
console.table([
  row('node -e 0 (reference)', time(['-e', '0'])),
  row('mailsvc --help', time(help)),
  row('mailsvc domain list --json', time(list)),
  row('mailsvc --help (tsx, from source)', time(help, fromSource)),
  row('mailsvc domain list --json (tsx, from source)', time(list, fromSource)),
]);
rmSync(dir, { recursive: true, force: true });
