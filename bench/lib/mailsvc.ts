// A `mailsvc serve` child process on a scratch SQLite data directory, with a workspace sending
// from a verified domain and its limits out of the way, set up before the child starts.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createServices } from '../../src/services.ts';
import { startChild, type Child } from './proc.ts';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/**
 * MAILSVC_BENCH_BUILD=DIR runs the `mailsvc` of another checkout (built, with its node_modules),
 * to measure an earlier build against this one on the same machine in the same sitting.
 */
const CLI = join(process.env.MAILSVC_BENCH_BUILD ?? ROOT, 'bin', 'mailsvc');

/** Builds dist/ when it is older than the sources, so the children run what production runs. */
export async function ensureBuilt(): Promise<void> {
  const { buildIsCurrent } = (await import(join(ROOT, 'bin', 'build-state.mjs'))) as { buildIsCurrent(): boolean };
  if (buildIsCurrent()) return;
  const built = spawnSync(process.execPath, [join(ROOT, 'bin', 'build.mjs')], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('npm run build failed');
}

export interface MailsvcSite {
  dir: string;
  configFile: string;
  apiKey: string;
  domain: string;
  cleanUp(): void;
}

/**
 * A data directory and config file; `settings` go on top of the defaults. `domain`: the verified
 * sending domain (bench.test). `trustedNetwork`: a network whose clients submit without AUTH as the
 * workspace's key (`submission.trustedNetworks`, written once the key exists).
 */
export async function mailsvcSite(
  settings: Record<string, unknown> = {},
  { domain = 'bench.test', trustedNetwork }: { domain?: string; trustedNetwork?: string | undefined } = {},
): Promise<MailsvcSite> {
  const dir = mkdtempSync(join(tmpdir(), 'mailsvc-bench-'));
  const configFile = join(dir, 'config.json');
  const write = (more: Record<string, unknown>) =>
    writeFileSync(
      configFile,
      JSON.stringify({ dataDir: dir, database: { client: 'sqlite' }, server: { hostname: 'mail.bench.test' }, http: { host: '127.0.0.1' }, ...settings, ...more }),
    );
  write({});
  const services = await createServices(loadConfig({ file: configFile, env: {} }), { log: createLogger('silent') });
  try {
    const { workspace, apiKey, keyRow } = await services.tenancy.createWorkspace('bench');
    if (trustedNetwork) {
      const submission = (settings.submission ?? {}) as Record<string, unknown>;
      write({ submission: { ...submission, trustedNetworks: [{ network: trustedNetwork, keyId: keyRow.id }] } });
    }
    await services.tenancy.setLimits('bench', { perMinute: 100_000_000, perHour: 100_000_000 });
    await services.domains.add(workspace.id, domain);
    await services.domains.forceVerify(null, domain);
    return { dir, configFile, apiKey, domain, cleanUp: () => rmSync(dir, { recursive: true, force: true }) };
  } finally {
    await services.close();
  }
}

/**
 * `mailsvc serve --roles ROLES` on the site; resolves once the line `ready` shows. With
 * MAILSVC_BENCH_PROFILE=DIR, the child writes a CPU profile (`node --cpu-prof`) there on exit;
 * MAILSVC_BENCH_NODE_ARGS adds Node options of its own (V8 flags NODE_OPTIONS refuses, such as
 * `--single-threaded-gc`); with MAILSVC_BENCH_HEAP=DIR, it writes a profile of every byte its event
 * loop allocated there on exit (`heap-sample.mjs`, read by `heap-top.ts`). A child not ready within
 * `timeoutMs` (default 60 s) is killed.
 */
export function startMailsvc(site: MailsvcSite, roles: string, ready: RegExp, env: NodeJS.ProcessEnv = {}, timeoutMs?: number): Promise<Child> {
  const profileDir = process.env.MAILSVC_BENCH_PROFILE;
  const extra = (process.env.MAILSVC_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const heap = process.env.MAILSVC_BENCH_HEAP ? ['--import', join(ROOT, 'bench', 'lib', 'heap-sample.mjs')] : [];
  const nodeArgs = [...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), ...heap, ...extra];
  return startChild(process.execPath, [...nodeArgs, CLI, '--config', site.configFile, 'serve', '--roles', roles, '--http-port', '0'], ready, {
    env: { ...process.env, ...env },
    timeoutMs,
  });
}
