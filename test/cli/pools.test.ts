import { describe, expect, it } from 'vitest';
import { oneJson, runCli } from '../helpers/cli.ts';
import { STORES } from '../helpers/stores.ts';
import { startTestServer } from '../helpers/server.ts';

const config = {
  delivery: {
    sourceAddresses: [
      { address: '127.0.0.10', ehlo: 'mta1.pools.test' },
      { address: '127.0.0.11', ehlo: 'mta2.pools.test' },
      { address: '127.0.0.12', ehlo: 'mta3.pools.test' },
    ],
    pools: { transactional: ['127.0.0.10'], bulk: ['127.0.0.11', '127.0.0.12'] },
    streamPools: { broadcast: 'bulk' },
  },
};

describe.each(STORES)('mailsvc workspace pool and domain pool (%s)', (kind) => {
  it('set and clear the pools, which show in the lists, in `domain show` and through the API', async () => {
    const server = await startTestServer(kind, { config });
    const cfg = ['--config', server.configFile];
    const { apiKey } = await server.workspace('acme');
    await server.workspace('other');
    const domain = oneJson(await runCli([...cfg, 'domain', 'add', 'shop.test', '--workspace', 'acme', '--json']));
    expect(domain.pool).toBeNull();

    const ws = oneJson(await runCli([...cfg, 'workspace', 'pool', 'acme', 'transactional', '--json']));
    expect(ws).toMatchObject({ name: 'acme', pool: 'transactional' });
    const listed = oneJson(await runCli([...cfg, 'workspace', 'list', '--json']));
    expect(listed.map((w: { name: string; pool: string | null }) => [w.name, w.pool])).toStrictEqual([
      ['acme', 'transactional'],
      ['other', null],
    ]);

    expect(oneJson(await runCli([...cfg, 'domain', 'pool', 'shop.test', 'bulk', '--json']))).toMatchObject({ id: domain.id, name: 'shop.test', pool: 'bulk' });
    expect(oneJson(await runCli([...cfg, 'domain', 'show', 'shop.test', '--json'])).pool).toBe('bulk');
    expect(oneJson(await runCli([...cfg, 'domain', 'list', '--json']))).toMatchObject([{ name: 'shop.test', pool: 'bulk' }]);
    expect((await server.api('GET', `/domains/${domain.id}`, { key: apiKey })).body.pool).toBe('bulk');

    expect(oneJson(await runCli([...cfg, 'domain', 'pool', 'shop.test', 'none', '--json'])).pool).toBeNull();
    expect(oneJson(await runCli([...cfg, 'workspace', 'pool', 'acme', 'none', '--json'])).pool).toBeNull();
    expect((await server.api('GET', `/domains/${domain.id}`, { key: apiKey })).body.pool).toBeNull();
  });

  it('tell people which addresses each stream sends from, and refuse a pool the configuration does not name', async () => {
    const server = await startTestServer(kind, { config });
    const cfg = ['--config', server.configFile];
    await server.workspace('acme');
    oneJson(await runCli([...cfg, 'domain', 'add', 'shop.test', '--json']));

    const ws = await runCli([...cfg, 'workspace', 'pool', 'acme', 'transactional']);
    expect(ws.code, ws.stderr).toBe(0);
    expect(ws.stdout).toBe(
      [
        'acme: pool transactional; unless a domain names its own, its mail goes from',
        "  transactional: pool transactional (the workspace's): 127.0.0.10",
        "  broadcast:     pool transactional (the workspace's): 127.0.0.10",
        '',
      ].join('\n'),
    );
    const domain = await runCli([...cfg, 'domain', 'pool', 'shop.test', 'none']);
    expect(domain.stdout).toBe(
      [
        'shop.test: no pool of its own; its mail goes from',
        "  transactional: pool transactional (the workspace's): 127.0.0.10",
        "  broadcast:     pool transactional (the workspace's): 127.0.0.10",
        '',
      ].join('\n'),
    );
    oneJson(await runCli([...cfg, 'workspace', 'pool', 'acme', 'none', '--json']));
    const bulk = await runCli([...cfg, 'domain', 'pool', 'shop.test', 'none']);
    expect(bulk.stdout).toContain(
      "  transactional: every source address: 127.0.0.10, 127.0.0.11, 127.0.0.12\n  broadcast:     pool bulk (the stream's): 127.0.0.11, 127.0.0.12\n",
    );
    const shown = await runCli([...cfg, 'domain', 'show', 'shop.test']);
    expect(shown.stdout).toMatch(/^ {2}sending pool: none of its own \(the workspace's, else the stream's, else every source address\)$/m);
    expect((await runCli([...cfg, 'domain', 'list'])).stdout).toMatch(/ POOL\n/);
    expect((await runCli([...cfg, 'workspace', 'list'])).stdout).toMatch(/ POOL +CREATED_AT\n/);

    for (const [args, message] of [
      [['workspace', 'pool', 'acme', 'blk'], /^error: Unknown pool "blk": delivery\.pools has transactional, bulk$/m],
      [['domain', 'pool', 'shop.test', 'blk'], /^error: Unknown pool "blk": delivery\.pools has transactional, bulk$/m],
      [['workspace', 'pool', 'nobody', 'bulk'], /^error: workspace "nobody" not found$/m],
      [['domain', 'pool', 'nowhere.test', 'bulk'], /^error: domain "nowhere.test" not found$/m],
      [['domain', 'pool', 'shop.test'], /missing required argument 'pool'/],
    ] as const) {
      const res = await runCli([...cfg, ...args, '--json']);
      expect(res.code, args.join(' ')).not.toBe(0);
      expect(res.stdout).toBe('');
      expect(res.stderr).toMatch(message);
    }
    expect(oneJson(await runCli([...cfg, 'domain', 'show', 'shop.test', '--json'])).pool).toBeNull();
  });

  it('say what happens without source addresses: the system picks the address', async () => {
    const server = await startTestServer(kind);
    const cfg = ['--config', server.configFile];
    await server.workspace('acme');
    const res = await runCli([...cfg, 'workspace', 'pool', 'acme', 'none']);
    expect(res.stdout).toContain('  transactional: the address the system picks, greeting as server.hostname\n');
    const refused = await runCli([...cfg, 'workspace', 'pool', 'acme', 'bulk']);
    expect(refused.stderr).toMatch(/^error: Unknown pool "bulk": no pools are configured \(delivery\.pools\)$/m);
  });
});
