import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { CLI, oneJson, runCli } from '../helpers/cli.ts';
import { STORES } from '../helpers/stores.ts';
import { startTestServer } from '../helpers/server.ts';

describe.each(STORES)('the mailsvc CLI (%s)', (kind) => {
  it('prints exactly one JSON document for every --json command', async () => {
    const server = await startTestServer(kind);
    const cfg = ['--config', server.configFile];
    const created = oneJson(await runCli([...cfg, 'workspace', 'create', 'acme', '--json']));
    expect(Object.keys(created)).toEqual(expect.arrayContaining(['id', 'name', 'api_key']));
    expect(created.api_key).toMatch(/^mk_[0-9A-Za-z]{32}$/);

    const runs = [
      ['migrate', '--json'],
      ['workspace', 'list', '--json'],
      ['workspace', 'limits', 'acme', '--per-minute', '120', '--per-hour', '5000', '--json'],
      ['domain', 'add', 'cli.test', '--workspace', 'acme', '--json'],
      ['domain', 'list', '--json'],
      ['domain', 'show', 'cli.test', '--json'],
      ['domain', 'tracking', 'cli.test', '--open', 'on', '--click', 'off', '--json'],
      ['key', 'create', '--workspace', 'acme', '--domain', 'cli.test', '--json'],
      ['key', 'list', '--json'],
    ];
    const docs: Record<string, any> = {};
    for (const args of runs) {
      const res = await runCli([...cfg, ...args]);
      expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(0);
      docs[args.slice(0, 2).join(' ')] = JSON.parse(res.stdout);
    }
    expect(docs['workspace limits']).toMatchObject({ name: 'acme', rate_per_minute: 120, rate_per_hour: 5000 });
    expect(docs['domain tracking']).toMatchObject({ open_tracking: true, click_tracking: false });
    expect(docs['key create']).toMatchObject({ scope: 'domain:cli.test' });
    expect(Object.keys(docs['key create'])).toEqual(expect.arrayContaining(['id', 'api_key', 'scope']));
    expect(docs['key list']).toHaveLength(2);

    const revoked = oneJson(await runCli([...cfg, 'key', 'revoke', String(docs['key create'].id), '--json']));
    expect(revoked.revoked_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const removed = oneJson(await runCli([...cfg, 'domain', 'remove', 'cli.test', '--json']));
    expect(removed).toMatchObject({ name: 'cli.test', deleted: true });
  });

  it('ends quietly when the reader of its output goes away, as in `mailsvc domain list | head -1`', async () => {
    const server = await startTestServer(kind);
    const cfg = ['--config', server.configFile];
    oneJson(await runCli([...cfg, 'workspace', 'create', 'piped', '--json']));
    for (let i = 0; i < 3; i++) oneJson(await runCli([...cfg, 'domain', 'add', `piped${i}.test`, '--workspace', 'piped', '--json']));
    const child = spawn(process.execPath, [CLI, ...cfg, 'domain', 'show', 'piped0.test'], { stdio: ['ignore', 'pipe', 'pipe'] });
    // The reading end is closed before the first line arrives: every write meets EPIPE.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const [code] = (await once(child, 'close')) as [number | null];
    expect(stderr).not.toMatch(/EPIPE|Unhandled/);
    expect(code).toBe(0);
  });

  it('exits non-zero with a clear message on stderr for bad arguments', async () => {
    const server = await startTestServer(kind);
    const cfg = ['--config', server.configFile];
    const cases: [string[], RegExp][] = [
      [['workspace', 'limits', 'acme', '--per-minute', 'lots'], /--per-minute.*must be a positive integer/],
      [['workspace', 'limits', 'nobody', '--per-minute', '5'], /^error: workspace "nobody" not found$/m],
      [['domain', 'add', 'bad.test', '--workspace', 'x'], /^error: workspace "x" not found$/m],
      [['domain', 'tracking', 'x.test', '--open', 'maybe'], /must be on or off/],
      [['key', 'create'], /no workspace yet; create one with: mailsvc workspace create NAME/],
      [['key', 'revoke', 'abc'], /positive integer/],
      [['no-such-command'], /unknown command/],
    ];
    for (const [args, message] of cases) {
      const res = await runCli([...cfg, ...args]);
      expect(res.code, args.join(' ')).not.toBe(0);
      expect(res.stdout).toBe('');
      expect(res.stderr).toMatch(message);
    }
  });
});
