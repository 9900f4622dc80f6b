import { describe, expect, it } from 'vitest';
import { durability } from '../../src/store/db.ts';
import { oneJson, runCli } from '../helpers/cli.ts';
import { spawnServe } from '../helpers/process.ts';
import { STORES } from '../helpers/stores.ts';
import { startTestServer } from '../helpers/server.ts';

describe.each(STORES)('durability of accepted mail (%s)', (kind) => {
  it('keeps every message answered 201 when the server is SIGKILLed right after the last answer', async () => {
    // The in-process server provides a scratch database and its config file, and shows the
    // setting in force on the connection the group committer commits on.
    const scratch = await startTestServer(kind);
    expect(await scratch.services.committer.run((tx) => durability(tx))).toBe(kind === 'sqlite' ? 'full' : 'on');
    await scratch.close();
    const cfg = ['--config', scratch.configFile];
    const { api_key: key } = oneJson(await runCli([...cfg, 'workspace', 'create', 'durable', '--json']));
    oneJson(await runCli([...cfg, 'workspace', 'limits', 'durable', '--per-minute', '100000', '--per-hour', '100000', '--json']));
    oneJson(await runCli([...cfg, 'domain', 'add', 'durable.test', '--workspace', 'durable', '--json']));
    oneJson(await runCli([...cfg, 'domain', 'verify', 'durable.test', '--skip-dns', '--json']));

    const first = await spawnServe(scratch.configFile, ['--roles', 'api']);
    const send = (i: number) =>
      fetch(`${first.url}/api/v1/emails`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ from: 'a@durable.test', to: `r${i}@example.org`, subject: `n${i}`, text: 'x' }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { id: number } }));
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => send(i)));
    await first.kill();

    const accepted = answers.filter((a) => a.status === 201).map((a) => a.body.id);
    expect(accepted).toHaveLength(200);

    const second = await spawnServe(scratch.configFile, ['--roles', 'api']);
    const seen = new Set<number>();
    let cursor: string | null = null;
    do {
      const res = await fetch(`${second.url}/api/v1/emails?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { headers: { authorization: `Bearer ${key}` } });
      const page = (await res.json()) as { data: { id: number; subject: string }[]; next_cursor: string | null };
      for (const m of page.data) seen.add(m.id);
      cursor = page.next_cursor;
    } while (cursor);
    expect([...accepted].filter((id) => !seen.has(id))).toStrictEqual([]);
    expect(seen.size).toBe(200);
    await second.stop();
  }, 120_000);
});
