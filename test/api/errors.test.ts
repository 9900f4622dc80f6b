import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.ts';
import { startTestServer, type ApiResponse } from '../helpers/server.ts';

const onlyError = (res: ApiResponse, status: number, label = '') => {
  expect(res.status, label).toBe(status);
  expect(res.headers.get('content-type'), label).toMatch(/^application\/json/);
  expect(Object.keys(res.body ?? {}), label).toStrictEqual(['error']);
  expect(typeof res.body.error, label).toBe('string');
};

/** Raw bytes on a socket, for requests fetch() would refuse to send. */
function rawHttp(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(request));
    let data = '';
    socket.on('data', (chunk: Buffer) => (data += chunk.toString()));
    socket.on('close', () => resolve(data));
    socket.on('error', reject);
  });
}

describe.each(STORES)('API errors and ids (%s)', (kind) => {
  it('serves ids only in canonical decimal; everything else is 404 {error}', async () => {
    const server = await startTestServer(kind);
    const ws = await server.sender('ids', 'ids.test');
    let id = 0;
    for (let i = 0; i < 16; i++) {
      const sent = await server.api('POST', '/emails', { key: ws.apiKey, body: { from: 'a@ids.test', to: 'u@dest.example', subject: `n${i}`, text: 'x' } });
      expect(sent.status).toBe(201);
      id = sent.body.id;
    }
    expect(id).toBe(16);
    expect((await server.api('GET', '/emails/16', { key: ws.apiKey })).body.subject).toBe('n15');
    expect((await server.api('GET', '/emails/1', { key: ws.apiKey })).body.subject).toBe('n0');

    const notCanonical = [
      '0x10',
      '%201',
      '1%20',
      '+1',
      '01',
      '1e1',
      '1.0',
      '-1',
      '0',
      '16.',
      'Infinity',
      '2147483648',
      '99999999999999999999',
      '9'.repeat(10_000),
      '%E2%80%8B1',
    ];
    for (const bad of notCanonical) {
      const label = `/emails/${bad.slice(0, 30)}`;
      const res = await server.api('GET', `/emails/${bad}`, { key: ws.apiKey });
      onlyError(res, 404, label);
      expect(res.body.error, label).toBe('Not found');
      onlyError(await server.api('POST', `/emails/${bad}/cancel`, { key: ws.apiKey }), 404, `cancel ${label}`);
      onlyError(await server.api('GET', `/domains/${bad}`, { key: ws.apiKey }), 404, `domains ${label}`);
      onlyError(await server.api('DELETE', `/api-keys/${bad}`, { key: ws.apiKey }), 404, `api-keys ${label}`);
    }
    // The largest id the database can hold is looked up, not refused as malformed.
    expect((await server.api('GET', '/emails/2147483647', { key: ws.apiKey })).body).toStrictEqual({ error: 'Not found' });
  });

  it('answers bad percent-encoding, unknown routes and over-long paths with {error}', async () => {
    const server = await startTestServer(kind);
    const { apiKey } = await server.workspace();
    for (const path of ['/emails/%', '/emails/%zz', '/suppressions/transactional/%', '/nowhere/%']) {
      const res = await server.api('GET', path, { key: apiKey });
      onlyError(res, 400, path);
      expect(res.body.error).toBe('The request path is not valid percent-encoding');
    }
    onlyError(await server.api('GET', '/nowhere', { key: apiKey }), 404);
    const long = await server.api('GET', `/nowhere/${'x'.repeat(10_000)}`, { key: apiKey });
    onlyError(long, 404);
    expect(long.body.error.length).toBeLessThan(300);
    // A 254-character address is a valid suppression entry, longer than Fastify's default limit.
    const address = `${'a'.repeat(64)}@${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.example`;
    expect((await server.api('POST', '/suppressions', { key: apiKey, body: { address, stream: 'transactional' } })).status).toBe(201);
    const entry = await server.api('GET', `/suppressions/transactional/${address}`, { key: apiKey });
    expect(entry.status).toBe(200);
    expect(entry.body.address).toBe(address);
  });

  it('validates query parameters like bodies and refuses impossible dates with 422 naming the parameter', async () => {
    const server = await startTestServer(kind);
    const { apiKey } = await server.workspace();
    const cases: [string, RegExp][] = [
      ['/usage?to=9999-99-99', /^Query parameter `to` must be a calendar date/],
      ['/usage?to=1e2', /^Query parameter `to` must be a calendar date/],
      ['/usage?to=0000-00-00', /^Query parameter `to` must be a calendar date/],
      ['/usage?to=2026-99-01', /^Query parameter `to` must be a calendar date/],
      ['/usage?from=2026-02-31', /^Query parameter `from` must be a calendar date/],
      ['/usage?from=1969-12-31', /^Query parameter `from` must be a calendar date/],
      ['/usage?from=2026-03-02&to=2026-03-01', /^Query parameter `from` must not be after `to`$/],
      ['/usage?to=2026-01-01&to=2026-01-02', /^Query parameter `to` must be a string$/],
      ['/usage?since=2026-01-01', /^Unknown query parameter `since`$/],
      ['/emails?limit=0', /^Query parameter `limit` must be >= 1$/],
      ['/emails?limit=abc', /^Query parameter `limit` must be an integer$/],
      ['/emails?status=lost', /^Query parameter `status` must be one of: /],
      ['/emails?cursor=%%%', /^Query parameter `cursor` is not a cursor this API returned$/],
      [`/emails?cursor=${Buffer.from('id:99999999999').toString('base64url')}`, /^Query parameter `cursor` is not a cursor this API returned$/],
      ['/domains?cursor=xyz', /^Query parameter `cursor` is not a cursor this API returned$/],
      ['/suppressions?limit=101', /^Query parameter `limit` must be <= 100$/],
    ];
    for (const [path, message] of cases) {
      const res = await server.api('GET', path, { key: apiKey });
      onlyError(res, 422, path);
      expect(res.body.error, path).toMatch(message);
    }
    const ok = await server.api('GET', '/usage?from=2024-02-29&to=2024-03-01', { key: apiKey });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ from: '2024-02-29', to: '2024-03-01', data: [] });
    expect((await server.api('GET', '/usage?to=9999-12-31', { key: apiKey })).body).toMatchObject({ from: '9999-12-02', to: '9999-12-31' });
  });

  it('refuses a __proto__ key by name without calling the body invalid JSON, and pollutes nothing', async () => {
    const server = await startTestServer(kind);
    const ws = await server.workspace();
    await server.verifiedDomain(ws.id, 'proto.test');
    const base = '"from":"a@proto.test","to":"u@dest.example","subject":"Hi","text":"x"';
    for (const raw of [`{${base},"__proto__":{"polluted":true}}`, `{${base},"headers":{"__proto__":{"polluted":true}}}`]) {
      const res = await server.api('POST', '/emails', { key: ws.apiKey, raw, headers: { 'content-type': 'application/json' } });
      onlyError(res, 422, raw);
      expect(res.body.error).toBe('Field `__proto__` is not allowed anywhere in a request body');
    }
    const ctor = await server.api('POST', '/emails', {
      key: ws.apiKey,
      raw: `{${base},"constructor":{"prototype":{"polluted":true}}}`,
      headers: { 'content-type': 'application/json' },
    });
    onlyError(ctor, 422);
    expect(ctor.body.error).toBe('Field `constructor.prototype` is not allowed anywhere in a request body');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((await server.api('GET', '/emails', { key: ws.apiKey })).body.data).toStrictEqual([]);
    // The text "__proto__" inside a value is just text.
    const fine = await server.api('POST', '/emails', {
      key: ws.apiKey,
      body: { from: 'a@proto.test', to: 'u@dest.example', subject: '__proto__', text: '{"__proto__":1}' },
    });
    expect(fine.status).toBe(201);
  });

  it('says the same thing about a name registered in another workspace as about one of its own', async () => {
    const server = await startTestServer(kind);
    const one = await server.workspace('one');
    const two = await server.workspace('two');
    expect((await server.api('POST', '/domains', { key: one.apiKey, body: { name: 'taken.test' } })).status).toBe(201);
    const mine = await server.api('POST', '/domains', { key: one.apiKey, body: { name: 'taken.test' } });
    const theirs = await server.api('POST', '/domains', { key: two.apiKey, body: { name: 'Taken.test.' } });
    for (const res of [mine, theirs]) {
      onlyError(res, 409);
      expect(res.body.error).toBe('Domain taken.test is not available');
    }
    expect((await server.api('GET', '/domains', { key: two.apiKey })).body.data).toStrictEqual([]);
  });

  it('answers framework errors (media type, size, JSON, HTTP syntax) with exactly {error}', async () => {
    const server = await startTestServer(kind, { config: { http: { host: '127.0.0.1', port: 0, bodyLimit: 1024 } } });
    const { apiKey } = await server.workspace();
    const json = { 'content-type': 'application/json' };
    onlyError(await server.api('POST', '/emails', { key: apiKey, raw: '{"from":', headers: json }), 400);
    onlyError(await server.api('POST', '/emails', { key: apiKey, raw: '', headers: json }), 400);
    onlyError(await server.api('POST', '/emails', { key: apiKey, raw: 'x'.repeat(2048), headers: json }), 413);
    onlyError(await server.api('POST', '/emails', { key: apiKey, raw: 'hello', headers: { 'content-type': 'text/plain' } }), 415);
    onlyError(await server.api('POST', '/emails', { key: apiKey, raw: '<a/>', headers: { 'content-type': 'application/xml' } }), 415);
    onlyError(await server.api('POST', '/emails', { key: apiKey, raw: '{}', headers: { 'content-type': '' } }), 415);
    onlyError(await server.api('POST', '/emails', { key: apiKey, raw: '[]', headers: json }), 422);
    onlyError(await server.api('GET', '/emails/1'), 401);

    const garbage = await rawHttp(server.url, 'GET /api/v1/emails HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n');
    expect(garbage).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(garbage.slice(garbage.indexOf('\r\n\r\n') + 4))).toStrictEqual({ error: 'Malformed HTTP request' });
    const huge = await rawHttp(server.url, `GET /api/v1/emails HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(huge).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(huge.slice(huge.indexOf('\r\n\r\n') + 4))).toStrictEqual({ error: 'Request headers are too large' });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});
