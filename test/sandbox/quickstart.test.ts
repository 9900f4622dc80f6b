import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { oneJson, runCli } from '../helpers/cli.ts';
import { spawnServe } from '../helpers/process.ts';

async function until<T>(read: () => T | Promise<T>, ok: (v: T) => boolean, ms: number, what: string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

// The README's quick start, as processes: `serve --sandbox` on an empty data directory, then the
// CLI and plain HTTP from "another terminal".
it('quick start: serve --sandbox, create, add and verify a *.test domain, send with HTTP, see it in `inbox list` with DKIM pass', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mailsvc-quickstart-'));
  const file = join(dir, 'config.json');
  writeFileSync(
    file,
    // No hosts given: the sandbox listens on loopback by itself.
    JSON.stringify({ dataDir: join(dir, 'data'), inbound: { port: 0 }, submission: { port: 0, tlsPort: 0 } }),
  );
  const serve = await spawnServe(file, ['--sandbox']);
  await until(
    () => serve.log(),
    (log) => log.includes('./bin/mailsvc inbox list'),
    20_000,
    'the sandbox walk-through',
  );
  expect(serve.log()).toMatch(/HTTP API listening on 127\.0\.0\.1:/);
  expect(serve.log()).toMatch(/SMTP submission listening on 127\.0\.0\.1:/);
  expect(serve.log()).toMatch(/inbound MX listening on 127\.0\.0\.1:/);
  expect(serve.log()).toContain('Sandbox mode: nothing leaves this machine');

  // The second terminal: the CLI in sandbox mode too, so that *.test domains verify without DNS.
  const cli = (...args: string[]) => runCli(['--config', file, ...args], { MAILSVC_DELIVERY_MODE: 'sandbox' });
  const empty = await cli('inbox', 'list');
  expect([empty.code, empty.stdout, empty.stderr]).toEqual([0, '(none)\n', expect.stringContaining('mailsvc serve --sandbox')]);
  const created = await cli('workspace', 'create', 'acme');
  expect([created.code, created.stderr]).toEqual([0, '']);
  expect(created.stdout).toContain('Next: mailsvc domain add acme.test --workspace acme');
  const key = /mk_\S+/.exec(created.stdout)![0];
  oneJson(await cli('domain', 'add', 'acme.test', '--workspace', 'acme', '--json'));
  // Verified against the sandbox's own records, and it says so, not "dns".
  expect(oneJson(await cli('domain', 'verify', 'acme.test', '--json'))).toMatchObject({ name: 'acme.test', status: 'verified', verified_by: 'sandbox' });

  const sent = await fetch(`${serve.url}/api/v1/emails`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ from: 'hello@acme.test', to: 'delivered@sandbox.mailsvc.test', subject: 'Hi', text: 'Hello' }),
  });
  expect(sent.status).toBe(201);
  const started = performance.now();
  const inboxApi = async () => (await (await fetch(`${serve.url}/api/v1/sandbox/messages`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: any[] };
  const { data } = await until(inboxApi, (page) => page.data.length > 0, 10_000, 'the capture');
  expect(performance.now() - started).toBeLessThan(1000);

  const listed = oneJson(await cli('inbox', 'list', '--json'));
  expect(listed).toMatchObject([{ id: data[0].id, recipient: 'delivered@sandbox.mailsvc.test', outcome: 'delivered', dkim: { result: 'pass' } }]);
  const table = await cli('inbox', 'list');
  expect(table.stdout).toMatch(/delivered@sandbox\.mailsvc\.test\s+delivered\s+pass\s+Hi/);

  const shown = oneJson(await cli('inbox', 'show', String(data[0].id), '--json'));
  expect(shown.dkim.result).toBe('pass');
  expect(shown.raw).toMatch(/^DKIM-Signature: /m);
  const human = await cli('inbox', 'show', String(data[0].id));
  expect(human.stdout).toContain('DKIM:      pass');
  expect(human.stdout).toContain('RCPT TO:   <delivered@sandbox.mailsvc.test>');
  expect(human.stdout).toMatch(/^Subject: Hi$/m);
  expect((await cli('inbox', 'show', '999')).stderr).toMatch(/no sandbox message 999/);

  // `inbox open` without a desktop opener prints where the .eml is; with one, hands it over.
  const bare = mkdtempSync(join(tmpdir(), 'mailsvc-nopath-'));
  const desktop = { PATH: bare, DISPLAY: ':0' };
  const printed = await runCli(['--config', file, 'inbox', 'open', String(data[0].id)], desktop);
  expect(printed.code).toBe(0);
  const eml = printed.stdout.trim();
  expect(eml).toMatch(/message-\d+\.eml$/);
  expect(printed.stderr).toContain('Not opened: xdg-open is not installed');
  expect(readFileSync(eml, 'utf8')).toBe(shown.raw);
  // An opener that finds nothing to open with (xdg-open on a server exits 3): not "Opened".
  writeFileSync(join(bare, 'xdg-open'), '#!/bin/sh\nexit 3\n');
  chmodSync(join(bare, 'xdg-open'), 0o755);
  const failed = await runCli(['--config', file, 'inbox', 'open', String(data[0].id)], desktop);
  expect([failed.code, failed.stdout]).toEqual([0, expect.stringMatching(/^\/.*message-\d+\.eml\n$/)]);
  expect(failed.stderr).toContain('Not opened: xdg-open failed (exit 3)');
  // No graphical session: nothing is tried.
  const headless = await runCli(['--config', file, 'inbox', 'open', String(data[0].id)], { PATH: bare, DISPLAY: '', WAYLAND_DISPLAY: '' });
  expect(headless.stderr).toContain('Not opened: no graphical session');
  const marker = join(bare, 'opened');
  writeFileSync(join(bare, 'xdg-open'), `#!/bin/sh\necho "$1" > ${marker}\n`);
  chmodSync(join(bare, 'xdg-open'), 0o755);
  const opened = await runCli(['--config', file, 'inbox', 'open', String(data[0].id)], desktop);
  expect(opened.stdout).toMatch(/^Opened .*message-\d+\.eml\n$/);
  await until(
    () => existsSync(marker) && readFileSync(marker, 'utf8').trim(),
    (v) => Boolean(v),
    10_000,
    'the opener',
  );
  expect(readFileSync(marker, 'utf8').trim()).toBe(opened.stdout.slice('Opened '.length).trim());

  expect(await serve.stop()).toBe(0);
}, 120_000);
