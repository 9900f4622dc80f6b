import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { oneJson, runCli } from '../helpers/cli.ts';
import { STORES } from '../helpers/stores.ts';
import { startTestServer } from '../helpers/server.ts';

describe.each(STORES)('suppression CSV (%s)', (kind) => {
  it('round-trips 1,000 entries from one workspace into an empty one', async () => {
    const server = await startTestServer(kind);
    const cfg = ['--config', server.configFile];
    const source = await server.workspace('source');
    await server.workspace('target');
    const entries = Array.from({ length: 1000 }, (_, i) => ({
      address: `user${i}@example.org`,
      stream: (i % 3 === 0 ? 'broadcast' : 'transactional') as 'broadcast' | 'transactional',
      reason: (['manual', 'bounce', 'complaint', 'unsubscribe'] as const)[i % 4],
    }));
    await server.services.suppressions.addMany(source.id, entries);

    const file = join(server.store.dataDir, 'export.csv');
    const exported = await runCli([...cfg, 'suppression', 'export', '--workspace', 'source', '--output', file]);
    expect(exported.code, exported.stderr).toBe(0);
    const csv = readFileSync(file, 'utf8');
    expect(csv.split('\n')[0]).toBe('address,stream,reason,email_id,created_at');
    expect(csv.trim().split('\n')).toHaveLength(1001);

    const imported = oneJson(await runCli([...cfg, 'suppression', 'import', file, '--workspace', 'target', '--json']));
    expect(imported).toStrictEqual({ read: 1000, imported: 1000, already_present: 0, errors: [] });

    const listed = oneJson(await runCli([...cfg, 'suppression', 'list', '--workspace', 'target', '--json']));
    const key = (e: { address: string; stream: string; reason: string }) => `${e.address}|${e.stream}|${e.reason}`;
    expect(listed.map(key).sort()).toStrictEqual(entries.map(key).sort());

    // Importing again adds nothing.
    const again = oneJson(await runCli([...cfg, 'suppression', 'import', file, '--workspace', 'target', '--json']));
    expect(again).toMatchObject({ imported: 0, already_present: 1000 });
  });

  it('reports each malformed line by number and imports the rest', async () => {
    const server = await startTestServer(kind);
    const cfg = ['--config', server.configFile];
    await server.workspace('w');
    const file = join(server.store.dataDir, 'in.csv');
    writeFileSync(
      file,
      [
        'address,stream,reason',
        'good1@example.org,broadcast,manual',
        'not-an-address,broadcast,manual',
        'good2@example.org,marketing,manual',
        'good3@example.org,,bounce',
      ].join('\n') + '\n',
    );
    const res = await runCli([...cfg, 'suppression', 'import', file, '--workspace', 'w', '--stream', 'transactional', '--json']);
    // The good lines are in, but the import did not do all it was asked: exit status 1.
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: 2 line\(s\) of .*in\.csv skipped, the other entries imported; .*--allow-partial/m);
    const summary = JSON.parse(res.stdout);
    expect(summary.imported).toBe(2);
    expect(summary.errors.map((e: { line: number }) => e.line)).toStrictEqual([3, 4]);
    expect(res.stderr).toMatch(/in\.csv:3: .*address/);
    expect(res.stderr).toMatch(/in\.csv:4: .*stream/);
    const listed = oneJson(await runCli([...cfg, 'suppression', 'list', '--workspace', 'w', '--json']));
    expect(listed.map((e: { address: string; stream: string; reason: string }) => [e.address, e.stream, e.reason])).toStrictEqual([
      ['good1@example.org', 'broadcast', 'manual'],
      ['good3@example.org', 'transactional', 'bounce'],
    ]);

    // An unterminated quote swallows the rest of the file: what came before is kept.
    const ragged = join(server.store.dataDir, 'ragged.csv');
    writeFileSync(ragged, 'address,stream\nok@example.org,broadcast\n"broken@example.org,broadcast\n');
    const res2 = await runCli([...cfg, 'suppression', 'import', ragged, '--workspace', 'w', '--allow-partial', '--json']);
    expect(res2.code).toBe(0);
    expect(JSON.parse(res2.stdout).imported).toBe(1);
    expect(JSON.parse(res2.stdout).errors).toHaveLength(1);
  });

  it('refuses a file without an address header as a whole, --allow-partial or not', async () => {
    const server = await startTestServer(kind);
    const cfg = ['--config', server.configFile];
    await server.workspace('w');
    const file = join(server.store.dataDir, 'emails.csv');
    writeFileSync(file, 'email,stream\nsomeone@example.org,broadcast\n');
    for (const extra of [[], ['--allow-partial']]) {
      const res = await runCli([...cfg, 'suppression', 'import', file, ...extra, '--json']);
      expect(res.code).toBe(1);
      expect(res.stdout).toBe('');
      expect(res.stderr).toBe('error: the header row must name an `address` column; it names "email", "stream"\n');
    }
    expect(oneJson(await runCli([...cfg, 'suppression', 'list', '--json']))).toEqual([]);
  });
});
