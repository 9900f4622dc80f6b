// Webhooks to a receiver on this machine: the sandbox allows loopback endpoints (a developer's
// receiver runs beside the server), live mode keeps refusing them; `mailsvc webhook test` applies
// the same rules as the server's dispatcher and says what it refused.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { startTestServer } from '../helpers/server.ts';
import { startReceiver } from './receiver.ts';

describe('webhooks in the sandbox', () => {
  it('accepts http://127.0.0.1:PORT and `webhook test` answers from the receiver', async () => {
    const server = await startTestServer('sqlite', { config: { delivery: { mode: 'sandbox' }, webhooks: { timeout: 5 } } });
    const { apiKey } = await server.workspace('acme');
    const receiver = await startReceiver(() => ({ status: 200, body: 'got it' }));

    const created = await server.api('POST', '/webhooks', { key: apiKey, body: { url: receiver.url, events: ['email.delivered'] } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    // The API's own test goes through.
    const viaApi = await server.api('POST', `/webhooks/${created.body.id}/test`, { key: apiKey });
    expect(viaApi.body).toMatchObject({ ok: true, response_code: 200, response_body: 'got it' });

    // The CLI in sandbox mode, as the sandbox's walk-through sets it up.
    const tested = await runCli(['--config', server.configFile, 'webhook', 'test', String(created.body.id)]);
    expect(tested.code, tested.stderr).toBe(0);
    expect(tested.stdout).toMatch(new RegExp(`^POST ${receiver.url.replace(/[.?]/g, '\\$&')}: 200 in \\d+ ms\\n\\ngot it\\n$`));
    expect(await receiver.waitFor(2)).toHaveLength(2);

    // Loopback only: a private network stays refused in the sandbox too.
    const privateNet = await server.api('POST', '/webhooks', { key: apiKey, body: { url: 'http://10.1.2.3/hook', events: ['email.delivered'] } });
    expect([privateNet.status, privateNet.body.error]).toStrictEqual([422, expect.stringContaining('10.1.2.3 resolves to 10.1.2.3, not a global unicast address')]);
  });

  it('live mode refuses loopback, and `webhook test` says it refused without sending', async () => {
    const server = await startTestServer('sqlite', { config: { delivery: { mode: 'sandbox' } } });
    const { apiKey } = await server.workspace('acme');
    const receiver = await startReceiver();
    // Registered by a sandbox server, then tested by a CLI in live mode: refused, named, not sent.
    const created = await server.api('POST', '/webhooks', { key: apiKey, body: { url: receiver.url, events: ['email.delivered'] } });
    expect(created.status).toBe(201);
    const live = { MAILSVC_DELIVERY_MODE: 'live' };
    const refused = await runCli(['--config', server.configFile, 'webhook', 'test', String(created.body.id)], live);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe(
      `POST ${receiver.url}: refused, nothing sent: 127.0.0.1 resolves to 127.0.0.1, not a global unicast address (loopback, private, link-local, shared, reserved, multicast and the like); webhooks are not sent there (webhooks.allowPrivateAddresses; sandbox mode allows loopback)\n`,
    );
    expect(refused.stderr).toContain(`error: webhook ${created.body.id} was not sent (delivery.mode live): 127.0.0.1 resolves to 127.0.0.1`);
    const json = await runCli(['--config', server.configFile, 'webhook', 'test', String(created.body.id), '--json'], live);
    expect([json.code, JSON.parse(json.stdout)]).toStrictEqual([1, expect.objectContaining({ ok: false, refused: true, response_code: null })]);
    expect(receiver.requests).toHaveLength(0);

    const liveServer = await startTestServer('sqlite');
    const live422 = await liveServer.api('POST', '/webhooks', {
      key: (await liveServer.workspace('acme')).apiKey,
      body: { url: receiver.url, events: ['email.delivered'] },
    });
    expect([live422.status, live422.body.error]).toStrictEqual([422, expect.stringContaining('127.0.0.1 resolves to 127.0.0.1, not a global unicast address')]);
  });

  it("docs/WEBHOOKS.md's local receiver gets the test event the page's commands send", async () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const page = readFileSync(`${root}docs/WEBHOOKS.md`, 'utf8');
    const section = page.slice(page.indexOf('\n## Try it locally\n')).split(/\n## /)[1]!;
    const [receiverJs, commands] = [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => m[2]!);
    // The page's port 8080, moved to one that is free here.
    const free = createServer().listen(0, '127.0.0.1');
    await once(free, 'listening');
    const port = String((free.address() as { port: number }).port);
    await new Promise((resolve) => free.close(resolve));

    const server = await startTestServer('sqlite', { config: { delivery: { mode: 'sandbox' } } });
    await server.workspace('acme');
    const receiver = spawn(process.execPath, ['--input-type=module', '-e', receiverJs!.replaceAll('8080', port)], { stdio: ['ignore', 'pipe', 'inherit'] });
    onTestFinished(() => {
      receiver.kill();
    });
    let printed = '';
    await new Promise<void>((resolve, reject) => {
      receiver.stdout!.on('data', (d: Buffer) => {
        printed += d.toString();
        if (printed.includes('listening on')) resolve();
      });
      receiver.once('exit', (code) => reject(new Error(`the receiver exited ${code}`)));
    });
    const run = spawnSync('bash', ['-euo', 'pipefail', '-c', commands!.replaceAll('8080', port)], {
      cwd: root,
      env: { ...process.env, MAILSVC_CONFIG: server.configFile },
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^POST http://127\\.0\\.0\\.1:${port}/hooks: 204 in \\d+ ms$`, 'm'));
    while (!/^test_\S+ \{/m.test(printed)) await once(receiver.stdout!, 'data');
    expect(printed).toContain('"event":"email.delivered"');
  });
});
