// The Docker image without a Docker daemon: the Dockerfile's steps replayed in a scratch folder
// from exactly the files its COPY lines take (minus .dockerignore), then the result started as
// the image would start it. A file the build reads but no COPY brings in (console/ once) makes
// the build fail here as it would in `docker build`.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { builtinModules } from 'node:module';
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  from: string;
  name: string | null;
  steps: Instruction[];
}

/** Instructions by stage: comments dropped, `\` continuations joined. */
export function parseDockerfile(text: string): Stage[] {
  const lines = text.split('\n').filter((l) => !/^\s*#/.test(l));
  const joined = lines.join('\n').replace(/\\\n/g, ' ');
  const stages: Stage[] = [];
  for (const line of joined.split('\n')) {
    const m = /^\s*([A-Za-z]+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const op = m[1]!.toUpperCase();
    const args = m[2]!.trim();
    if (op === 'FROM') {
      const [from, , name] = args.split(/\s+/);
      stages.push({ from: from!, name: name ?? null, steps: [] });
    } else {
      stages.at(-1)!.steps.push({ op, args });
    }
  }
  return stages;
}

/** `["a", "b"]` or `a b`, with `--flag=value` options split off. */
function words(args: string): { flags: Record<string, string>; rest: string[] } {
  const list: string[] = args.startsWith('[') ? JSON.parse(args) : args.split(/\s+/);
  const flags: Record<string, string> = {};
  const rest: string[] = [];
  for (const w of list) {
    const f = /^--([a-z-]+)=(.*)$/.exec(w);
    if (f) flags[f[1]!] = f[2]!;
    else rest.push(w);
  }
  return { flags, rest };
}

/** .dockerignore as a predicate on context-relative paths (`*` within one segment, `**` across). */
function ignorePredicate(): (path: string) => boolean {
  const file = join(ROOT, '.dockerignore');
  const patterns = existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && !l.startsWith('#'))
    : [];
  const regexps = patterns.map((p) => {
    const body = p
      .replace(/^\/+/, '')
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*\*/g, '\uFFFF')
      .replace(/\*/g, '[^/]*')
      .replace(/\?/g, '[^/]')
      .replace(/\uFFFF/g, '.*');
    return new RegExp(`^${body}(?:/.*)?$`);
  });
  return (path) => regexps.some((r) => r.test(path));
}

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((p) => statSync(join(dir, p)).isFile());
}

interface Replay {
  stages: Stage[];
  /** The folder standing for /app in each stage. */
  dirs: string[];
  /** The commands each RUN line stood for, for the failure messages. */
  log: string[];
}

/**
 * Replays every stage. WORKDIR must be /app. COPY from the context takes what the context has
 * minus .dockerignore; COPY --from=N takes from stage N's folder. `npm ci` is replayed with the
 * installed packages (node_modules linked in: a real install needs the registry and minutes) and
 * the lifecycle scripts npm runs for the package itself, from the copied package.json.
 */
function replay(scratch: string): Replay {
  const stages = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
  const ignored = ignorePredicate();
  const dirs: string[] = [];
  const log: string[] = [];
  stages.forEach((stage, i) => {
    const app = join(scratch, `stage${i}`);
    mkdirSync(app, { recursive: true });
    dirs.push(app);
    const inApp = (dest: string) => {
      const path = dest.startsWith('/') ? dest : `/app/${dest}`;
      if (!path.startsWith('/app')) throw new Error(`COPY to ${dest}: outside /app, teach this test where that goes`);
      return join(app, path.slice('/app'.length));
    };
    for (const step of stage.steps) {
      if (step.op === 'WORKDIR') expect(step.args, 'the test maps /app onto its folders').toBe('/app');
      if (step.op === 'COPY') {
        const { flags, rest } = words(step.args);
        const dest = rest.pop()!;
        const fromStage = flags.from === undefined ? null : stages.findIndex((s, j) => s.name === flags.from || String(j) === flags.from);
        for (const source of rest) {
          const origin = fromStage === null ? join(ROOT, source) : join(dirs[fromStage]!, source.replace(/^\/app\/?/, ''));
          expect(existsSync(origin), `COPY ${source}: no such file`).toBe(true);
          const target = dest.endsWith('/') ? join(inApp(dest), source.split('/').pop()!) : inApp(dest);
          if (lstatSync(origin).isSymbolicLink()) {
            // The installed packages, linked in by the replayed `npm ci`: linked on, not copied.
            mkdirSync(dirname(target), { recursive: true });
            symlinkSync(readlinkSync(origin), target);
            continue;
          }
          const files = statSync(origin).isDirectory() ? filesUnder(origin).map((f) => join(source, f)) : [source];
          for (const file of files) {
            const rel = relative(source, file);
            if (fromStage === null && ignored(file)) continue;
            const from = fromStage === null ? join(ROOT, file) : join(origin, rel);
            const to = rel ? join(target, rel) : target;
            mkdirSync(dirname(to), { recursive: true });
            cpSync(from, to, { preserveTimestamps: true });
          }
        }
      }
      if (step.op === 'RUN') {
        const command = step.args;
        if (/^npm ci\b/.test(command)) {
          symlinkSync(join(ROOT, 'node_modules'), join(app, 'node_modules'));
          const scripts: Record<string, string> = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')).scripts ?? {};
          for (const name of ['preinstall', 'install', 'postinstall', 'prepublish', 'preprepare', 'prepare', 'postprepare']) {
            if (!scripts[name]) continue;
            log.push(`${name}: ${scripts[name]}`);
            const run = spawnSync('sh', ['-c', scripts[name]!], { cwd: app, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: scratch } });
            expect(run.status, `npm ci's ${name} script (${scripts[name]}) in the build stage:\n${run.stdout}${run.stderr}`).toBe(0);
          }
        } else if (/^apt-get update\b/.test(command)) {
          log.push(`skipped (system packages): ${command}`);
        } else if (/^mkdir -p \/app\/\S+( && chown -R node:node \/app\/\S+)?$/.test(command)) {
          mkdirSync(inApp(/^mkdir -p (\S+)/.exec(command)![1]!), { recursive: true });
        } else {
          throw new Error(`RUN ${command}: this test does not know how to replay it; teach it`);
        }
      }
    }
  });
  return { stages, dirs, log };
}

/** Bare package names that files import, e.g. `fastify`, `@fastify/swagger`. */
function importedPackages(dir: string): Set<string> {
  const names = new Set<string>();
  // dist/vendor/ holds bundles (their imports are resolved already) and dist/public/ browser code.
  for (const file of filesUnder(dir).filter((f) => /\.(m?js)$/.test(f) && !/^(vendor|public)\//.test(f))) {
    const text = readFileSync(join(dir, file), 'utf8');
    const statements = /^\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']|^\s*import\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/gm;
    for (const m of text.matchAll(statements)) {
      const spec = (m[1] ?? m[2] ?? m[3])!;
      if (/^[./]/.test(spec)) continue;
      if (spec.startsWith('node:') || builtinModules.includes(spec.split('/')[0]!)) continue;
      names.add(
        spec
          .split('/')
          .slice(0, spec.startsWith('@') ? 2 : 1)
          .join('/'),
      );
    }
  }
  return names;
}

describe('the Dockerfile, replayed without a daemon', () => {
  let scratch: string;
  let image: Replay;

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'mailsvc-image-'));
    image = replay(scratch);
    return () => rmSync(scratch, { recursive: true, force: true });
  }, 60_000);

  it('builds dist/ from the files the build stage copies, with production packages only', () => {
    const build = image.dirs[0]!;
    expect(image.log.some((l) => l.startsWith('prepare: '))).toBe(true);
    expect(existsSync(join(build, 'dist', '.built'))).toBe(true);
    expect(existsSync(join(build, 'dist', 'public', 'console.js'))).toBe(true);
    // `npm ci --omit=dev` installs no devDependencies: neither the build nor what runs may need one.
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const install = image.stages[0]!.steps.find((s) => s.op === 'RUN' && s.args.startsWith('npm ci'))!;
    expect(install.args).toContain('--omit=dev');
    const runtimeNeeds = new Set([...importedPackages(join(build, 'bin')), ...importedPackages(join(build, 'dist'))]);
    expect(runtimeNeeds.has('fastify'), 'the scan finds the imports of dist/').toBe(true);
    runtimeNeeds.delete('pg-native'); // pg's optional native binding, never installed
    const missing = [...runtimeNeeds].filter((name) => !(name in pkg.dependencies) && !existsSync(join(ROOT, 'node_modules', name)));
    const devOnly = [...runtimeNeeds].filter((name) => name in (pkg.devDependencies ?? {}) && !(name in pkg.dependencies));
    expect({ missing, devOnly }).toStrictEqual({ missing: [], devOnly: [] });
  });

  it('runs as an unprivileged user under tini, without the sources, and its health check passes', async () => {
    const final = image.stages.at(-1)!;
    const runtime = image.dirs.at(-1)!;
    const last = (op: string) => final.steps.filter((s) => s.op === op).at(-1)?.args;
    expect(last('USER')).toMatch(/^(?!root$|0$)\w+/);
    const entrypoint: string[] = JSON.parse(last('ENTRYPOINT')!);
    const cmd: string[] = JSON.parse(last('CMD')!);
    expect(entrypoint.slice(0, 2)).toStrictEqual(['/usr/bin/tini', '--']);
    expect(final.steps.some((s) => s.op === 'RUN' && /apt-get install .*\btini\b/.test(s.args))).toBe(true);
    // bin/mailsvc falls back to compiling src/ when dist/ is stale: the image has no src/ to
    // fall back on, so starting below proves it runs the build.
    expect(existsSync(join(runtime, 'src'))).toBe(false);

    const dataDir = join(scratch, 'volume');
    const config = join(scratch, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        dataDir,
        server: { hostname: 'mx.image.test' },
        http: { host: '127.0.0.1', port: 0 },
        submission: { host: '127.0.0.1', port: 0, tlsPort: 0 },
        inbound: { host: '127.0.0.1', port: 0 },
      }),
    );
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: scratch, MAILSVC_CONFIG: config, MAILSVC_LOG_LEVEL: 'info' };
    for (const s of final.steps.filter((s) => s.op === 'ENV')) {
      const [name, value] = s.args.split('=');
      env[name!] = value;
    }
    const [node, ...args] = [...entrypoint.slice(2), ...cmd];
    expect(node).toBe('node');
    const child = spawn(process.execPath, args, { cwd: runtime, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = once(child, 'exit');
    onTestFinished(async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    });
    let output = '';
    const port = await new Promise<number>((resolve, reject) => {
      const seen = (d: Buffer) => {
        output += d.toString();
        // /healthz answers 200 once every role is up, which the `ready` line announces.
        const m = /HTTP API listening on [\d.]+:(\d+)/.exec(output);
        if (m && /"phase":"ready"/.test(output)) resolve(Number(m[1]));
      };
      child.stdout!.on('data', seen);
      child.stderr!.on('data', seen);
      child.once('exit', (code) => reject(new Error(`the image's command exited ${code}:\n${output}`)));
    });
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status, output).toBe(200);

    // The HEALTHCHECK command, as Docker runs it: in WORKDIR, with the image's environment.
    const check: string[] = JSON.parse(last('HEALTHCHECK')!.replace(/^.*?CMD\s+/, ''));
    const probe = spawn(process.execPath, check.slice(1), { cwd: runtime, env: { ...env, MAILSVC_HTTP_PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let probeOut = '';
    probe.stdout!.on('data', (d) => (probeOut += d));
    probe.stderr!.on('data', (d) => (probeOut += d));
    const [code] = await once(probe, 'exit');
    expect(code, probeOut).toBe(0);

    child.kill('SIGTERM');
    expect((await exited)[0], output).toBe(0);
  }, 30_000);
});
