import { describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const post = async (server: TestServer, path: string, body: string, contentType: string) => {
  const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body });
  return { status: res.status, body: (await res.json()) as { error: string } };
};

/** Valid JSON of about `bytes` bytes: a parser would accept it, so only a limit refuses it. */
const bigJson = (bytes: number) => JSON.stringify({ api_key: 'x'.repeat(bytes) });

describe('unauthenticated routes', () => {
  it('read at most 4 KB on /t/* (any content type) and /console/session (JSON, the only one it takes), and say so', async () => {
    const server = await startTestServer('sqlite');
    const small = { error: 'Request body exceeds the limit of 4 KB (4096 bytes)' };
    for (const [type, body] of [
      ['application/json', bigJson(1_000_000)],
      ['application/x-www-form-urlencoded', `List-Unsubscribe=${'x'.repeat(1_000_000)}`],
      ['text/plain', 'x'.repeat(1_000_000)],
    ]) {
      expect([type, await post(server, '/t/u/anything', body, type)]).toStrictEqual([type, { status: 413, body: small }]);
    }
    expect(await post(server, '/console/session', bigJson(1_000_000), 'application/json')).toStrictEqual({ status: 413, body: small });
    // Other types have no parser there: refused before anything is read.
    expect((await post(server, '/console/session', 'x'.repeat(1_000_000), 'text/plain')).status).toBe(415);
    // Just over the limit is refused too; the API's own limit is still the server's 10 MB.
    expect((await post(server, '/console/session', bigJson(4100), 'application/json')).status).toBe(413);
    const ws = await server.workspace();
    const api = await fetch(`${server.url}/api/v1/emails`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ws.apiKey}` },
      body: bigJson(11 * 1024 * 1024),
    });
    expect([api.status, await api.json()]).toStrictEqual([413, { error: 'Request body exceeds the limit of 10 MB (10485760 bytes)' }]);
  });

  it('answer a path that names nothing with 404 without parsing its body', async () => {
    const server = await startTestServer('sqlite');
    // Not JSON at all: a parser would answer 400; nothing looks at it, so the answer is the 404.
    const broken = `{"a": ${'['.repeat(500_000)}`;
    for (const path of ['/no-such-path', '/t/x/token', '/api/v1/nowhere', '/console/elsewhere']) {
      expect([path, await post(server, path, broken, 'application/json')]).toStrictEqual([path, { status: 404, body: { error: `Not found: POST ${path}` } }]);
    }
    // Over the server's 10 MB limit: still the 404, not a 413 from a parser that started reading.
    const huge = await post(server, '/no-such-path', bigJson(11 * 1024 * 1024), 'application/json');
    expect(huge).toStrictEqual({ status: 404, body: { error: 'Not found: POST /no-such-path' } });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it('count forged tracking tokens against the per-IP limit, before verifying them', async () => {
    const server = await startTestServer('sqlite');
    const statuses: number[] = [];
    for (let i = 0; i < 600; i++) statuses.push((await fetch(`${server.url}/t/${['o', 'c', 'u'][i % 3]}/forged${i}`)).status);
    expect(statuses.every((s) => s === 404)).toBe(true);
    const limited = await fetch(`${server.url}/t/c/forged`);
    expect([limited.status, limited.headers.get('retry-after') !== null]).toStrictEqual([429, true]);
    expect(await limited.json()).toStrictEqual({ error: 'Too many requests' });
  });
});
