import { describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server.ts';
import { STORES } from '../helpers/stores.ts';

describe.each(STORES)('suppressions: search, CSV import and export over the API (%s)', (kind) => {
  it('imports a CSV, reporting bad lines by number, exports it back, and searches by part of an address', async () => {
    const server = await startTestServer(kind);
    const ws = await server.workspace();
    const csv = 'address,reason\nann@example.org,bounce\nnot an address\nbob_x@example.org,\nANN@example.org,manual\n';
    const imported = await server.api('POST', '/suppressions/import', { key: ws.apiKey, body: { csv, stream: 'broadcast' } });
    expect(imported.status).toBe(200);
    expect(imported.body.added).toBe(2);
    expect(imported.body.existing).toBe(1);
    expect(imported.body.problems).toHaveLength(1);
    expect(imported.body.problems[0].line).toBe(3);

    const exported = await server.api('GET', '/suppressions/export?stream=broadcast', { key: ws.apiKey });
    expect(exported.body.count).toBe(2);
    expect(exported.body.csv.split('\n')[0]).toBe('address,stream,reason,email_id,created_at');
    expect(exported.body.csv).toContain('ann@example.org,broadcast,bounce,');
    expect((await server.api('GET', '/suppressions/export?stream=transactional', { key: ws.apiKey })).body.count).toBe(0);

    const search = async (q: string) =>
      (await server.api('GET', `/suppressions?search=${encodeURIComponent(q)}`, { key: ws.apiKey })).body.data.map((e: { address: string }) => e.address);
    expect(await search('ANN')).toEqual(['ann@example.org']);
    // LIKE's wildcards are plain characters here.
    expect(await search('b_x')).toEqual(['bob_x@example.org']);
    expect(await search('%')).toEqual([]);
  });

  it('refuses a file without an address column, and an import by a domain key', async () => {
    const server = await startTestServer(kind);
    const ws = await server.workspace();
    const bad = await server.api('POST', '/suppressions/import', { key: ws.apiKey, body: { csv: 'email\nx@example.org\n', stream: 'broadcast' } });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toMatch(/address/);
    await server.verifiedDomain(ws.id, 'scoped.test');
    const scoped = await server.services.tenancy.createKey(ws.id, { domain: 'scoped.test' });
    expect((await server.api('POST', '/suppressions/import', { key: scoped.secret, body: { csv: 'address\nx@example.org\n', stream: 'broadcast' } })).status).toBe(403);
  });
});
