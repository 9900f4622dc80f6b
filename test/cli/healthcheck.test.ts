import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { startTestServer } from '../helpers/server.ts';

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('mailsvc healthcheck', () => {
  it('follows the configured HTTP port: exit 0 while the API answers, 1 naming the address when nothing does', async () => {
    const server = await startTestServer('sqlite');
    const port = Number(new URL(server.url).port);
    const config = join(server.store.dataDir, 'health.json');
    writeFileSync(config, JSON.stringify({ ...server.store.config, http: { host: '0.0.0.0', port } }));

    const up = await runCli(['--config', config, 'healthcheck']);
    expect(up).toEqual({ code: 0, stdout: `http://127.0.0.1:${port}/healthz: ok\n`, stderr: '' });

    // The environment overrides the file, as for every setting.
    const down = await closedPort();
    const res = await runCli(['--config', config, 'healthcheck', '--timeout', '2'], { MAILSVC_HTTP_PORT: String(down) });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toBe(`error: http://127.0.0.1:${down}/healthz: ECONNREFUSED\n`);
  });
});
