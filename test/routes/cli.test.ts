import { describe, expect, it } from 'vitest';
import { oneJson, runCli } from '../helpers/cli.ts';
import { startTestServer } from '../helpers/server.ts';
import { STORES } from '../helpers/stores.ts';

describe.each(STORES)('mailsvc route (%s)', (kind) => {
  it('adds, lists, shows the log of and removes routes', async () => {
    const server = await startTestServer(kind, { config: { webhooks: { allowPrivateAddresses: true } } });
    const cfg = ['--config', server.configFile];
    const { id: ws } = await server.workspace('acme');
    await server.verifiedDomain(ws, 'acme.test');
    oneJson(await runCli([...cfg, 'domain', 'inbound', 'acme.test', 'on', '--json']));

    const added = await runCli([...cfg, 'route', 'add', '*+tickets@acme.test', 'http://127.0.0.1:9/in', '--priority', '2']);
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(/^route \d+: \*\+tickets@acme\.test → http:\/\/127\.0\.0\.1:9\/in \(priority 2\)\nsecret: whsec_[0-9A-Za-z]{32}\n$/);
    const listed = oneJson(await runCli([...cfg, 'route', 'list', '--json']));
    expect(listed).toMatchObject([{ match: '*+tickets@acme.test', priority: 2, status: 'active' }]);
    const id = String(listed[0].id);
    expect(oneJson(await runCli([...cfg, 'route', 'deliveries', id, '--json']))).toStrictEqual([]);
    const refused = await runCli([...cfg, 'route', 'add', 'x@elsewhere.test', 'http://127.0.0.1:9/in']);
    expect([refused.code, refused.stderr]).toStrictEqual([1, 'error: Field `match`: elsewhere.test is not a domain of this workspace\n']);
    expect(oneJson(await runCli([...cfg, 'route', 'remove', id, '--json']))).toStrictEqual({ id: Number(id), deleted: true });
    const gone = await runCli([...cfg, 'route', 'deliveries', id]);
    expect([gone.code, gone.stderr]).toStrictEqual([1, `error: route "${id}" not found\n`]);
  });
});
