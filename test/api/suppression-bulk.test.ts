import { describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { STORES } from '../helpers/stores.ts';

const HEADER = 'address,stream,reason,email_id,created_at';

/** The addresses of an exported CSV, header row checked and dropped. */
function exportedAddresses(csv: string): string[] {
  const lines = csv.trimEnd().split('\n');
  expect(lines[0]).toBe(HEADER);
  return lines.slice(1).map((line) => line.split(',')[0]!);
}

async function importCsv(server: TestServer, key: string, csv: string, stream?: string) {
  return server.api('POST', '/suppressions/import', { key, body: stream ? { csv, stream } : { csv } });
}

describe.each(STORES)('bulk suppression import and export (%s)', (kind) => {
  it('imports in many small transactions keeping every line, the counts and the bad lines by number', async () => {
    // 7 entries per transaction: the 40 good lines below cross several chunk boundaries.
    const server = await startTestServer(kind, { config: { suppression: { importChunkRows: 7 } } });
    const ws = await server.workspace();
    const lines = ['address,stream,reason'];
    for (let i = 0; i < 40; i++) lines.push(`user${i}@example.org,${i % 2 ? 'broadcast' : 'transactional'},${i % 3 ? 'manual' : 'bounce'}`);
    lines.push('not an address,broadcast,manual'); // line 42
    lines.push('USER0@example.org,transactional,manual'); // line 43: already imported on line 2
    lines.push('x@example.org,nowhere,manual'); // line 44
    lines.push('y@example.org,broadcast,angry'); // line 45
    const res = await importCsv(server, ws.apiKey, `${lines.join('\n')}\n`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ added: 40, existing: 1, records: 44 });
    expect(res.body.problems.map((p: { line: number }) => p.line)).toEqual([42, 44, 45]);
    expect(res.body.problems[0].error).toMatch(/not a valid address/);
    expect(res.body.problems[1].error).toMatch(/stream/);
    expect(res.body.problems[2].error).toMatch(/reason/);
    // 44 lines read 7 at a time, the good ones of each piece written together; the last piece
    // (lines 44 and 45) holds no good line.
    expect(res.body.chunks).toBe(6);

    const exported = await server.api('GET', '/suppressions/export?format=csv', { key: ws.apiKey });
    expect(exportedAddresses(exported.text).sort()).toEqual(Array.from({ length: 40 }, (_, i) => `user${i}@example.org`).sort());
    expect(exported.text).toContain('user3@example.org,broadcast,bounce,');

    // A line the parser skips is reported as its slice is read, before earlier lines of later
    // chunks are checked; the answer still lists problems in line order.
    const mixed = ['address', ...Array.from({ length: 12 }, (_, i) => (i === 8 ? 'nope' : `m${i}@example.org`)), '"bad"x'];
    const mixedRes = await importCsv(server, (await server.workspace()).apiKey, mixed.join('\n'), 'broadcast');
    const problemLines = mixedRes.body.problems.map((p: { line: number }) => p.line);
    expect(problemLines).toContain(10);
    expect(problemLines).toContain(14);
    expect(problemLines).toEqual([...problemLines].sort((a, b) => a - b));

    // Again: everything is already there.
    const again = await importCsv(server, ws.apiKey, `${lines.join('\n')}\n`);
    expect(again.body).toMatchObject({ added: 0, existing: 41, records: 44 });
  });

  it('refuses an import over the row cap with 413 naming it, importing nothing', async () => {
    const server = await startTestServer(kind, { config: { suppression: { importMaxRows: 10, importChunkRows: 3 } } });
    const ws = await server.workspace();
    const csv = (n: number) => `address\n${Array.from({ length: n }, (_, i) => `cap${i}@example.org`).join('\n')}\n`;

    const over = await importCsv(server, ws.apiKey, csv(11), 'broadcast');
    expect(over.status).toBe(413);
    expect(over.body).toStrictEqual({ error: expect.stringMatching(/at most 10 lines .*suppression\.importMaxRows.* holds 11/) });
    const afterRefusal = await server.api('GET', '/suppressions/export', { key: ws.apiKey });
    expect(afterRefusal.body.count).toBe(0);

    // The field itself is bounded too, by its length.
    const long = await importCsv(server, ws.apiKey, `address\n${'a'.repeat(5_000_000)}`, 'broadcast');
    expect(long.status).toBe(422);
    expect(long.body.error).toBe('Field `csv` must NOT have more than 5000000 characters');

    // Bad lines count towards the cap too, empty ones do not; exactly at the cap is fine.
    const at = await importCsv(server, ws.apiKey, `${csv(10)}\n\r\n\n`, 'broadcast');
    expect(at.status).toBe(200);
    expect(at.body).toMatchObject({ added: 10, records: 10 });
  });

  it('streams an export page by page, every entry exactly once, as a CSV file or as JSON', async () => {
    // 3 entries per page: 20 entries of one stream and 11 of the other cross many pages.
    const server = await startTestServer(kind, { config: { suppression: { exportPageRows: 3 } } });
    const ws = await server.workspace();
    const other = await server.workspace();
    const transactional = Array.from({ length: 20 }, (_, i) => `t${i}@example.org`);
    const broadcast = Array.from({ length: 11 }, (_, i) => `b${i}@example.org`);
    expect((await importCsv(server, ws.apiKey, `address\n${transactional.join('\n')}\n`, 'transactional')).body.added).toBe(20);
    expect((await importCsv(server, ws.apiKey, `address\n${broadcast.join('\n')}\n`, 'broadcast')).body.added).toBe(11);
    await importCsv(server, other.apiKey, 'address\nsomeone-else@example.org\n', 'broadcast');

    const file = await server.api('GET', '/suppressions/export', { key: ws.apiKey, headers: { accept: 'text/csv' } });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(file.headers.get('content-disposition')).toBe('attachment; filename="suppressions.csv"');
    expect(exportedAddresses(file.text).sort()).toEqual([...transactional, ...broadcast].sort());

    const one = await server.api('GET', '/suppressions/export?stream=broadcast&format=csv', { key: ws.apiKey });
    expect(one.headers.get('content-disposition')).toBe('attachment; filename="suppressions-broadcast.csv"');
    expect(exportedAddresses(one.text).sort()).toEqual([...broadcast].sort());

    // The JSON answer keeps its shape: {csv, count}.
    const json = await server.api('GET', '/suppressions/export', { key: ws.apiKey });
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(json.body).sort()).toEqual(['count', 'csv']);
    expect(json.body.count).toBe(31);
    expect(exportedAddresses(json.body.csv).sort()).toEqual([...transactional, ...broadcast].sort());

    const empty = await server.api('GET', '/suppressions/export?format=csv', { key: (await server.workspace()).apiKey });
    expect(empty.text).toBe(`${HEADER}\n`);
    const bad = await server.api('GET', '/suppressions/export?stream=nope', { key: ws.apiKey });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toMatch(/stream/);
  });

  it("gives a domain-scoped key only its domain's entries in an export, and no import", async () => {
    const server = await startTestServer(kind, { config: { suppression: { exportPageRows: 2 } } });
    const ws = await server.workspace();
    await server.verifiedDomain(ws.id, 'scoped.test');
    await server.verifiedDomain(ws.id, 'other.test');
    const scoped = await server.services.tenancy.createKey(ws.id, { domain: 'scoped.test' });
    const mine: string[] = [];
    for (let i = 0; i < 7; i++) {
      // Interleaved with entries of the other domain and manual ones, so pages mix them.
      await server.services.suppressions.add(ws.id, {
        address: `mine${i}@example.org`,
        stream: i % 2 ? 'broadcast' : 'transactional',
        reason: 'bounce',
        domain: 'scoped.test',
      });
      await server.services.suppressions.add(ws.id, { address: `theirs${i}@example.org`, stream: 'broadcast', reason: 'bounce', domain: 'other.test' });
      await server.services.suppressions.add(ws.id, { address: `manual${i}@example.org`, stream: 'transactional', reason: 'manual' });
      mine.push(`mine${i}@example.org`);
    }

    const file = await server.api('GET', '/suppressions/export?format=csv', { key: scoped.secret });
    expect(exportedAddresses(file.text).sort()).toEqual(mine.sort());
    const json = await server.api('GET', '/suppressions/export?stream=broadcast', { key: scoped.secret });
    expect(json.body.count).toBe(3);
    const all = await server.api('GET', '/suppressions/export', { key: ws.apiKey });
    expect(all.body.count).toBe(21);

    const refused = await importCsv(server, scoped.secret, 'address\nx@example.org\n', 'broadcast');
    expect(refused.status).toBe(403);
    expect((await server.api('GET', '/suppressions/export', { key: ws.apiKey })).body.count).toBe(21);
  });

  it('answers /healthz while a 50,000-line import is being written', async () => {
    const server = await startTestServer(kind);
    const ws = await server.workspace();
    const csv = `address\n${Array.from({ length: 50_000 }, (_, i) => `bulk${i}@example.org`).join('\n')}\n`;
    const order: string[] = [];
    const importing = importCsv(server, ws.apiKey, csv, 'broadcast').then((res) => {
      order.push('import');
      return res;
    });
    // Once the first chunk is committed the import is under way, with most of it still to write.
    while ((await server.services.suppressions.list(ws.id, { limit: 1 })).length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const health = await fetch(`${server.url}/healthz`);
    order.push('healthz');
    expect(health.status).toBe(200);
    const imported = await importing;
    expect(order).toEqual(['healthz', 'import']);
    expect(imported.body).toMatchObject({ added: 50_000, existing: 0, records: 50_000, problems: [] });
  });
});
