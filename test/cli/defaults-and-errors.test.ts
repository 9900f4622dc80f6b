import { describe, expect, it } from 'vitest';
import { oneJson, runCli } from '../helpers/cli.ts';
import { startTestServer } from '../helpers/server.ts';

// What the CLI does is the same on either store; these run on SQLite only.
describe('the CLI tells the truth', () => {
  // Some twenty CLI processes: generous for a loaded machine.
  it('uses the only workspace when --workspace is left out, and names the choices when there are several', { timeout: 120_000 }, async () => {
    const server = await startTestServer('sqlite');
    const cfg = ['--config', server.configFile];

    const none = await runCli([...cfg, 'suppression', 'list']);
    expect(none.code).toBe(1);
    expect(none.stderr).toBe('error: There is no workspace yet; create one with: mailsvc workspace create NAME\n');

    oneJson(await runCli([...cfg, 'workspace', 'create', 'solo', '--json']));
    const added = oneJson(await runCli([...cfg, 'suppression', 'add', 'Someone@Example.org', '--json']));
    expect(added).toMatchObject({ address: 'someone@example.org', stream: 'transactional', reason: 'manual', created: true });
    expect(oneJson(await runCli([...cfg, 'suppression', 'list', '--json'])).map((e: { address: string }) => e.address)).toEqual(['someone@example.org']);
    expect(oneJson(await runCli([...cfg, 'domain', 'add', 'solo.test', '--json']))).toMatchObject({ name: 'solo.test', status: 'pending' });
    expect(oneJson(await runCli([...cfg, 'key', 'create', '--json']))).toMatchObject({ scope: 'workspace' });
    expect(oneJson(await runCli([...cfg, 'usage', '--json'])).totals).toEqual({ transactional: 0, broadcast: 0 });
    const csv = await runCli([...cfg, 'suppression', 'export']);
    expect(csv.stdout.split('\n')[1]).toMatch(/^someone@example\.org,transactional,manual,,/);
    const removed = oneJson(await runCli([...cfg, 'suppression', 'remove', 'someone@example.org', '--json']));
    expect(removed).toEqual({ address: 'someone@example.org', stream: 'transactional', deleted: true });

    oneJson(await runCli([...cfg, 'workspace', 'create', 'second', '--json']));
    for (const args of [['suppression', 'list'], ['suppression', 'add', 'x@example.org'], ['key', 'create'], ['domain', 'add', 'two.test'], ['usage']]) {
      const res = await runCli([...cfg, ...args]);
      expect(res.code, args.join(' ')).toBe(1);
      expect(res.stdout).toBe('');
      expect(res.stderr).toBe('error: There are 2 workspaces (solo, second); name one with --workspace\n');
    }
    expect(oneJson(await runCli([...cfg, 'suppression', 'list', '--workspace', 'second', '--json']))).toEqual([]);
  });

  it('says what was not found', async () => {
    const server = await startTestServer('sqlite');
    const cfg = ['--config', server.configFile];
    oneJson(await runCli([...cfg, 'workspace', 'create', 'acme', '--json']));
    const cases: [string[], string][] = [
      [['suppression', 'list', '--workspace', 'nope'], 'workspace "nope" not found'],
      [['domain', 'list', '--workspace', 'nope'], 'workspace "nope" not found'],
      [['workspace', 'limits', 'nope', '--per-minute', '5'], 'workspace "nope" not found'],
      [['domain', 'show', 'nope.com'], 'domain "nope.com" not found'],
      [['domain', 'verify', 'nope.com'], 'domain "nope.com" not found'],
      [['domain', 'tracking', 'nope.com', '--open', 'off'], 'domain "nope.com" not found'],
      [['domain', 'remove', 'nope.com'], 'domain "nope.com" not found'],
      [['key', 'revoke', '999'], 'key "999" not found'],
      [['suppression', 'remove', 'nobody@example.org', '--stream', 'broadcast'], 'nobody@example.org is not suppressed on broadcast'],
    ];
    for (const [args, message] of cases) {
      const res = await runCli([...cfg, ...args]);
      expect(res.code, args.join(' ')).toBe(1);
      expect(res.stdout).toBe('');
      expect(res.stderr).toBe(`error: ${message}\n`);
    }
  });

  it('keeps logs out of what a command prints, the tracking switch included', async () => {
    const server = await startTestServer('sqlite');
    // A configuration that logs at info: one-shot commands still print only their output.
    const cfg = ['--config', server.configFile];
    const env = { MAILSVC_LOG_LEVEL: 'info' };
    oneJson(await runCli([...cfg, 'workspace', 'create', 'acme', '--json'], env));
    const ws = (await server.services.tenancy.listWorkspaces())[0]!;
    await server.verifiedDomain(ws.id, 'acme.test');

    const table = await runCli([...cfg, 'send', '--from', 'ops@acme.test', '--to', 'someone@example.org'], env);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^Message \d+ accepted \(transactional\)\.\nADDRESS +STATUS +ATTEMPTS +LAST_RESPONSE\nsomeone@example\.org +queued +0 +-\n/);
    expect(table.stdout).not.toContain('{');
    expect(table.stderr).toBe('');
    const json = oneJson(await runCli([...cfg, 'send', '--from', 'ops@acme.test', '--to', 'someone@example.org', '--json'], env));
    expect(json.recipients).toEqual([{ address: 'someone@example.org', status: 'queued', attempts: 0, last_response: null }]);

    const tracking = await runCli([...cfg, 'domain', 'tracking', 'acme.test', '--open', 'on', '--json']);
    expect(tracking.code).toBe(0);
    expect(JSON.parse(tracking.stdout)).toMatchObject({ open_tracking: true });
    expect(tracking.stderr).toBe('');
    const off = await runCli([...cfg, 'domain', 'tracking', 'acme.test', '--open', 'off', '--json']);
    expect(off.stderr).toBe('');
  });
});
