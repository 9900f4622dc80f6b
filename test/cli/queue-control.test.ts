import { describe, expect, it } from 'vitest';
import { oneJson, runCli } from '../helpers/cli.ts';
import { startTestServer } from '../helpers/server.ts';

/** A server with two workspaces' mail to two groups and a domain not looked up yet; the CLI on its database. */
async function world() {
  const server = await startTestServer('sqlite');
  const a = await server.sender('a', 'acme.test');
  const b = await server.sender('b', 'beta.test');
  const now = Date.now();
  await server.services.db('delivery_domains').insert([
    { domain: 'gmail.com', group_name: 'provider:google', expires_at: now + 3_600_000 },
    { domain: 'other.org', group_name: 'mx:mx.other.org', expires_at: now + 3_600_000 },
  ]);
  const send = async (key: string, from: string, to: string[], extra: Record<string, unknown> = {}) => {
    const res = await server.api('POST', '/emails', { key, body: { from, to, subject: 's', text: 't', ...extra } });
    if (res.status !== 201) throw new Error(`send: ${res.status} ${res.text}`);
    return res.body.id as number;
  };
  const first = await send(a.apiKey, 'x@acme.test', ['x@gmail.com', 'y@other.org', 'z@new.example']);
  const second = await send(b.apiKey, 'x@beta.test', ['t@gmail.com'], { stream: 'broadcast' });
  const cli = (...args: string[]) => runCli(['--config', server.configFile, ...args]);
  const status = async (id: number, key: string) => (await server.api('GET', `/emails/${id}`, { key })).body.status as string;
  return { server, a, b, first, second, cli, status };
}

describe('mailsvc queue hold, release and cancel', () => {
  it('acts server-wide on the filter given and prints how many recipients it affected', { timeout: 60_000 }, async () => {
    const w = await world();
    expect(oneJson(await w.cli('queue', 'hold', '--domain', 'gmail.com', '--reason', 'provider incident', '--json'))).toStrictEqual({ affected: 2 });
    expect([await w.status(w.first, w.a.apiKey), await w.status(w.second, w.b.apiKey)]).toStrictEqual(['queued', 'held']);

    const stats = oneJson(await w.cli('queue', 'stats', '--json'));
    expect(stats.by_status).toMatchObject({ held: 2, queued: 2 });
    expect(stats.groups).toStrictEqual([
      { group: 'provider:google', queued: 0, deferred: 0, held: 2, connections: 5, per_minute: null, on_hold: false },
      { group: 'mx:mx.other.org', queued: 1, deferred: 0, held: 0, connections: 10, per_minute: null, on_hold: false },
      { group: 'unresolved', queued: 1, deferred: 0, held: 0, connections: 10, per_minute: null, on_hold: false },
    ]);

    const release = await w.cli('queue', 'release', '--domain', 'gmail.com', '--workspace', 'b');
    expect(release).toMatchObject({ code: 0, stdout: 'affected 0\n' }); // the server-wide hold is not b's alone
    expect(oneJson(await w.cli('queue', 'release', '--domain', 'gmail.com', '--json'))).toStrictEqual({ affected: 2 });

    expect(oneJson(await w.cli('queue', 'hold', '--group', 'mx:mx.other.org', '--json'))).toStrictEqual({ affected: 1 });
    expect(oneJson(await w.cli('queue', 'cancel', '--workspace', 'a', '--email', String(w.first), '--json'))).toStrictEqual({ affected: 3 });
    expect(await w.status(w.first, w.a.apiKey)).toBe('canceled');
    expect((await w.server.api('GET', '/usage', { key: w.a.apiKey })).body.totals).toStrictEqual({ transactional: 0, broadcast: 0 });
    expect(oneJson(await w.cli('queue', 'cancel', '--stream', 'broadcast', '--json'))).toStrictEqual({ affected: 1 });
    expect(await w.status(w.second, w.b.apiKey)).toBe('canceled');
  });

  it('refuses an empty filter, an unknown workspace or message and a stream that does not exist, exiting non-zero', { timeout: 60_000 }, async () => {
    const w = await world();
    for (const action of ['hold', 'release', 'cancel']) {
      const empty = await w.cli('queue', action, '--json');
      expect(empty.code).not.toBe(0);
      expect(empty.stdout).toBe('');
      expect(empty.stderr).toMatch(/Name at least one of --domain, --group, --workspace, --stream, --sending-domain, --email/);
    }
    const unknown = await w.cli('queue', 'hold', '--workspace', 'nobody');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/workspace "nobody" not found/);
    const missing = await w.cli('queue', 'cancel', '--email', '999999');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/email "999999" not found/);
    const stream = await w.cli('queue', 'hold', '--stream', 'marketing');
    expect(stream.code).not.toBe(0);
    expect(stream.stderr).toMatch(/must be transactional or broadcast/);
    expect([await w.status(w.first, w.a.apiKey), await w.status(w.second, w.b.apiKey)]).toStrictEqual(['queued', 'queued']);
  });

  it('shows each destination group with its limits and state in a table for people, within 100 columns', { timeout: 60_000 }, async () => {
    const w = await world();
    await w.cli('queue', 'hold', '--group', 'provider:google', '--reason', 'the provider asked every sender to slow down during its incident');
    await w.server.services.db('delivery_groups').insert({
      name: 'mx:mx.other.org',
      suspended_until: Date.parse('2099-01-01T00:00:00.000Z'),
      reason: '421 4.7.0 [TSS04] Messages temporarily deferred due to unexpected volume or user complaints',
      updated_at: Date.now(),
    });
    const out = await w.cli('queue', 'stats');
    expect(out.code).toBe(0);
    const lines = out.stdout.split('\n');
    expect(lines.filter((l) => l.length > 100)).toStrictEqual([]);
    const table = lines.slice(lines.indexOf('Waiting by destination group:') + 1);
    expect(table[0]).toMatch(/^GROUP +QUEUED +DEFERRED +HELD +LIMITS +STATE$/);
    // The state is prose: broken over lines in its column rather than cut off.
    expect(table[1]).toMatch(/^provider:google +0 +0 +2 +5 conn, no rate limit +on hold: the provider asked/);
    expect(table[2]).toMatch(/^ {40,}\S/);
    expect(table.join(' ').replace(/ +/g, ' ')).toContain('the provider asked every sender to slow down during its incident');
    expect(out.stdout).toMatch(/\nmx:mx\.other\.org +1 +0 +0 +10 conn, no rate limit +suspended until\n +2099-01-01T00:00:00\.000Z: 421 4\.7\.0\n/);
    expect(out.stdout).toMatch(/\nunresolved +1 +0 +0 +10 conn, no rate limit +open\n/);
  });
});
