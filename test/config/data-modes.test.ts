import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { spawnServe } from '../helpers/process.ts';

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe('data directory and file modes', () => {
  let previous: number;
  // The children inherit this umask: the one most systems give a login shell.
  beforeEach(() => {
    previous = process.umask(0o022);
  });
  afterEach(() => {
    process.umask(previous);
  });

  function scratch(): { dir: string; data: string; config: string } {
    const dir = mkdtempSync(join(tmpdir(), 'mailsvc-modes-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const data = join(dir, 'data');
    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        dataDir: data,
        server: { hostname: 'mail.modes.test' },
        http: { host: '127.0.0.1' },
        inbound: { host: '127.0.0.1', port: 0 },
        submission: { host: '127.0.0.1', port: 0, tlsPort: 0 },
      }),
    );
    return { dir, data, config };
  }

  it('migrate creates data/ 0700 and mailsvc.sqlite 0600 under umask 022', async () => {
    const { data, config } = scratch();
    const res = await runCli(['--config', config, 'migrate']);
    expect(res.code, res.stderr).toBe(0);
    expect(mode(data)).toBe('700');
    expect(mode(join(data, 'mailsvc.sqlite'))).toBe('600');
  });

  it('serve on a checked-out data/ (0755, as git makes it) tightens it, and the WAL, SHM and generated TLS pair are 0600', async () => {
    const { data, config } = scratch();
    mkdirSync(data, { mode: 0o755 });
    writeFileSync(join(data, '.gitkeep'), '');
    expect(mode(data)).toBe('755');
    // The inbound role starts (and generates its TLS pair) before the API says it listens.
    const server = await spawnServe(config, ['--roles', 'inbound,api']);
    // A write puts pages in the WAL; the running server holds the -shm open.
    const ws = await runCli(['--config', config, 'workspace', 'create', 'modes', '--json']);
    expect(ws.code, ws.stderr).toBe(0);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect(mode(data)).toBe('700');
    for (const file of ['mailsvc.sqlite', 'mailsvc.sqlite-wal', 'mailsvc.sqlite-shm', 'tls-selfsigned.key', 'tls-selfsigned.crt']) {
      expect(mode(join(data, file)), file).toBe('600');
    }
    expect(await server.stop()).toBe(0);
  }, 60_000);
});
