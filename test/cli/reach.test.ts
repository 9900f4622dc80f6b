import { describe, expect, it } from 'vitest';
import { oneJson, runCli } from '../helpers/cli.ts';
import { STORES } from '../helpers/stores.ts';
import { startTestServer } from '../helpers/server.ts';

// A bound in seconds that includes a CLI process's start: timed (vitest.config.ts), apart from
// the rest of the CLI's tests.
describe.each(STORES)('the mailsvc CLI and a running server (%s)', (kind) => {
  it('reaches a running server within 5 s: a key revoked by the CLI is refused', async () => {
    const server = await startTestServer(kind);
    const cfg = ['--config', server.configFile];
    oneJson(await runCli([...cfg, 'workspace', 'create', 'live', '--json']));
    const created = oneJson(await runCli([...cfg, 'key', 'create', '--workspace', 'live', '--json']));
    expect((await server.api('GET', '/domains', { key: created.api_key })).status).toBe(200);
    const started = Date.now();
    oneJson(await runCli([...cfg, 'key', 'revoke', String(created.id), '--json']));
    // The server keeps keys it has seen for a few seconds (SPEC §9: changes reach it within 5 s).
    let status = 0;
    while (Date.now() - started < 6000) {
      status = (await server.api('GET', '/domains', { key: created.api_key })).status;
      if (status !== 200) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(401);
    expect(Date.now() - started).toBeLessThan(5000);

    oneJson(await runCli([...cfg, 'workspace', 'limits', 'live', '--per-minute', '1', '--json']));
    const key2 = oneJson(await runCli([...cfg, 'key', 'create', '--workspace', 'live', '--json'])).api_key;
    expect((await server.api('GET', '/domains', { key: key2 })).status).toBe(200);
    expect((await server.api('GET', '/domains', { key: key2 })).status).toBe(429);
  });
});
