import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { describe, expect, it, onTestFinished } from 'vitest';
import { CLI } from './helpers/cli.ts';

describe('mailsvc serve as a process', () => {
  it('migrates an empty data dir, says what to do next, answers /healthz and stops cleanly on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailsvc-serve-'));
    const file = join(dir, 'c.json');
    writeFileSync(
      file,
      JSON.stringify({
        dataDir: join(dir, 'data'),
        server: { hostname: 'mail.serve.test' },
        http: { host: '127.0.0.1' },
        inbound: { host: '127.0.0.1', port: 0 },
        submission: { host: '127.0.0.1', port: 0, tlsPort: 0 },
      }),
    );
    const child = spawn(process.execPath, [CLI, '--config', file, 'serve', '--http-port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    // Whatever fails below, no server is left running and no directory left behind.
    onTestFinished(async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await once(child, 'exit');
      }
      rmSync(dir, { recursive: true, force: true });
    });
    let log = '';
    const port = await new Promise<number>((resolve, reject) => {
      child.stderr.on('data', (d) => {
        log += d;
        const m = /HTTP API listening on [\d.]+:(\d+)/.exec(log);
        if (m && log.includes('No workspace yet')) resolve(Number(m[1]));
      });
      child.on('exit', (code) => reject(new Error(`exited ${code}: ${log}`)));
    });
    expect(log).toContain('mailsvc workspace create NAME');
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toStrictEqual({ status: 'ok' });

    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    expect(log).toMatch(/shutting down/);
  }, 60_000);
});
