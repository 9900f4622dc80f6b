import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The process leaves no event we can await from here (it is not our child): poll, generously. */
async function gone(pid: number, withinMs: number): Promise<boolean> {
  const until = Date.now() + withinMs;
  while (alive(pid) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
  return !alive(pid);
}

describe('npm start', () => {
  it('stops the server with one SIGTERM to npm', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailsvc-npm-start-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        dataDir: join(dir, 'data'),
        server: { hostname: 'mail.npm-start.test' },
        http: { host: '127.0.0.1', port: 0 },
        inbound: { host: '127.0.0.1', port: 0 },
        submission: { host: '127.0.0.1', port: 0, tlsPort: 0 },
      }),
    );
    const npm = spawn('npm', ['start'], {
      cwd: ROOT,
      env: { ...process.env, MAILSVC_CONFIG: config, MAILSVC_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = once(npm, 'exit');
    let server = 0;
    onTestFinished(() => {
      if (alive(npm.pid!)) npm.kill('SIGKILL');
      if (server && alive(server)) process.kill(server, 'SIGKILL');
    });
    let log = '';
    await new Promise<void>((resolve, reject) => {
      const seen = (d: Buffer) => {
        log += d.toString();
        if (/HTTP API listening on/.test(log)) resolve();
      };
      npm.stdout!.on('data', seen);
      npm.stderr!.on('data', seen);
      npm.on('exit', (code) => reject(new Error(`npm start exited ${code}: ${log}`)));
    });
    // Whatever npm put between itself and the server (a shell, or nothing), find the node process.
    const tree = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' });
    const rows = tree
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .filter((r) => r.length > 2);
    const descendants = new Set([npm.pid!]);
    for (let changed = true; changed;) {
      changed = false;
      for (const [pid, ppid] of rows) {
        if (descendants.has(Number(ppid)) && !descendants.has(Number(pid))) {
          descendants.add(Number(pid));
          changed = true;
        }
      }
    }
    const matching = rows.filter(([pid, , ...args]) => descendants.has(Number(pid)) && args.join(' ').includes('bin/mailsvc serve'));
    // `sh -c "node bin/mailsvc serve"` matches too: the server is the match with no matching child.
    const serverRow = matching.find(([pid]) => !matching.some(([, ppid]) => ppid === pid));
    expect(serverRow, tree).toBeDefined();
    server = Number(serverRow![0]);

    npm.kill('SIGTERM');
    await exited;
    expect(await gone(server, 15_000), `server ${server} still running after npm stopped`).toBe(true);
  });
});
