import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { buildIsCurrent } from '../../bin/build-state.mjs';
import { spawnSync } from 'node:child_process';
import { CLI, runCli } from '../helpers/cli.ts';

/**
 * Reports on stderr every package that a module of ours imports: from node_modules, or bundled
 * into dist/vendor/ by the build.
 */
const PACKAGE_LOG_HOOK = `
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  const parent = context.parentURL ?? '';
  if (parent.startsWith('file:') && !parent.includes('/node_modules/')) {
    const pkg = /\\/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(resolved.url) ?? /\\/dist\\/vendor\\/([^/.]+)/.exec(resolved.url);
    if (pkg) process.stderr.write('package ' + pkg[1] + '\\n');
  }
  return resolved;
}`;

function scratchRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'mailsvc-build-'));
  onTestFinished(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'src', 'cli'), { recursive: true });
  writeFileSync(join(root, 'src', 'cli', 'program.ts'), 'export {};\n');
  writeFileSync(join(root, 'src', 'main.ts'), 'export {};\n');
  return root;
}

const at = (path: string, seconds: number) => utimesSync(path, seconds, seconds);

function allAt(root: string, seconds: number) {
  for (const p of ['src/cli/program.ts', 'src/main.ts', 'src/cli', 'src']) if (existsSync(join(root, p))) at(join(root, p), seconds);
}

function stamp(root: string, seconds: number) {
  mkdirSync(join(root, 'dist'), { recursive: true });
  writeFileSync(join(root, 'dist', '.built'), '');
  at(join(root, 'dist', '.built'), seconds);
}

describe('the ahead-of-time build', () => {
  it('is used only while nothing under src/ changed after it started', () => {
    const root = scratchRoot();
    allAt(root, 1_000);
    expect(buildIsCurrent(root)).toBe(false); // never built

    stamp(root, 2_000);
    expect(buildIsCurrent(root)).toBe(true);

    at(join(root, 'src', 'cli', 'program.ts'), 3_000); // an edit
    expect(buildIsCurrent(root)).toBe(false);

    allAt(root, 1_000);
    rmSync(join(root, 'src', 'main.ts')); // a deletion changes the folder
    expect(buildIsCurrent(root)).toBe(false);

    allAt(root, 1_000);
    expect(buildIsCurrent(root)).toBe(true);
    mkdirSync(join(root, 'node_modules'));
    writeFileSync(join(root, 'node_modules', '.package-lock.json'), '{}');
    at(join(root, 'node_modules', '.package-lock.json'), 3_000); // packages installed since
    expect(buildIsCurrent(root)).toBe(false);
  });

  it('and the sources through tsx (MAILSVC_FROM_SOURCE=1) give the same CLI', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailsvc-start-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ dataDir: join(dir, 'data'), server: { hostname: 'mail.start.test' } }));

    const built = await runCli(['--help']);
    const fromSource = await runCli(['--help'], { MAILSVC_FROM_SOURCE: '1' });
    expect(built.code).toBe(0);
    expect(fromSource).toEqual(built);
    expect(built.stdout).toMatch(/^Usage: mailsvc /);

    // The switch is not mistaken for a configuration variable.
    const migrated = await runCli(['--config', config, 'migrate', '--json'], { MAILSVC_FROM_SOURCE: '1' });
    expect(migrated.stderr).toBe('');
    expect(JSON.parse(migrated.stdout).applied.length).toBeGreaterThan(0);
    const again = await runCli(['--config', config, 'migrate', '--json']);
    expect(JSON.parse(again.stdout)).toEqual({ applied: [] });
  });

  /** The packages our modules import while the CLI runs `args`, as PACKAGE_LOG_HOOK reports them. */
  function packagesLoaded(args: string[]): Set<string> {
    const dir = mkdtempSync(join(tmpdir(), 'mailsvc-hook-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'hook.mjs'), PACKAGE_LOG_HOOK);
    writeFileSync(join(dir, 'register.mjs'), `import { register } from 'node:module';\nregister(${JSON.stringify(new URL(`file://${join(dir, 'hook.mjs')}`).href)});\n`);
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ dataDir: join(dir, 'data'), log: { level: 'warn' } }));
    const res = spawnSync(process.execPath, ['--import', join(dir, 'register.mjs'), CLI, '--config', config, ...args], { encoding: 'utf8' });
    expect(res.status, res.stderr).toBe(0);
    const packages = new Set(
      res.stderr
        .split('\n')
        .filter((l) => l.startsWith('package '))
        .map((l) => l.slice(8)),
    );
    packages.delete('tsx'); // the fallback loader, when dist/ is stale
    return packages;
  }

  it('--help loads no package but commander: commands import what they use when they run', () => {
    expect([...packagesLoaded(['--help'])]).toEqual(['commander']);
  });

  it('a command on the store loads no mail parser: mailparser comes with the first message read', () => {
    const packages = packagesLoaded(['workspace', 'list', '--json']);
    expect(packages).toContain('knex');
    expect(packages).not.toContain('mailparser');
  });
});
