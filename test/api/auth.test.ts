import { describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.ts';
import { startTestServer } from '../helpers/server.ts';

describe.each(STORES)('authentication and error bodies (%s)', (kind) => {
  it('answers 401 with the exact body for a missing, wrong, malformed or revoked key', async () => {
    const server = await startTestServer(kind);
    const { apiKey } = await server.workspace();
    expect((await server.api('GET', '/domains', { key: apiKey })).status).toBe(200);

    const missing = await server.api('GET', '/domains');
    const wrong = await server.api('GET', '/domains', { key: `mk_${'x'.repeat(32)}` });
    const malformed = await server.api('GET', '/domains', { headers: { authorization: 'Basic Zm9vOmJhcg==' } });
    const keys = (await server.api('GET', '/api-keys', { key: apiKey })).body.data;
    expect((await server.api('DELETE', `/api-keys/${keys[0].id}`, { key: apiKey })).status).toBe(200);
    const revoked = await server.api('GET', '/domains', { key: apiKey });

    for (const res of [missing, wrong, malformed, revoked]) {
      expect(res.status).toBe(401);
      expect(JSON.parse(res.text)).toStrictEqual({ error: 'Invalid or missing API key' });
    }
  });

  it('answers 404 with an error body for an unknown route, authenticated or not', async () => {
    const server = await startTestServer(kind);
    const { apiKey } = await server.workspace();
    const res = await fetch(`${server.url}/no/such/route`);
    expect(res.status).toBe(404);
    expect(Object.keys(await res.json())).toStrictEqual(['error']);
    const inApi = await server.api('GET', '/no-such-thing', { key: apiKey });
    expect(inApi.status).toBe(404);
    expect(Object.keys(inApi.body)).toStrictEqual(['error']);
  });

  it('renders malformed JSON, wrong types, unknown fields, wrong media type and big bodies as {error}', async () => {
    const server = await startTestServer(kind, { config: { http: { host: '127.0.0.1', port: 0, bodyLimit: 4096 } } });
    const { apiKey } = await server.workspace();
    const bad = await server.api('POST', '/domains', { key: apiKey, raw: '{"name": ', headers: { 'content-type': 'application/json' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toStrictEqual({ error: 'Request body is not valid JSON' });

    const wrongType = await server.api('POST', '/domains', { key: apiKey, body: { name: 42 } });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body).toStrictEqual({ error: 'Field `name` must be a string' });

    const unknown = await server.api('POST', '/domains', { key: apiKey, body: { name: 'a.test', nmae: 'x' } });
    expect(unknown.status).toBe(422);
    expect(unknown.body).toStrictEqual({ error: 'Unknown field `nmae`' });

    const missing = await server.api('POST', '/domains', { key: apiKey, body: {} });
    expect(missing.body).toStrictEqual({ error: 'Missing required field `name`' });

    const text = await server.api('POST', '/domains', { key: apiKey, raw: 'name=a.test', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect(Object.keys(text.body)).toStrictEqual(['error']);

    const big = await server.api('POST', '/domains', { key: apiKey, body: { name: 'x'.repeat(5000) } });
    expect(big.status).toBe(413);
    expect(big.body).toStrictEqual({ error: 'Request body exceeds the limit of 4 KB (4096 bytes)' });

    // SPEC §3: an id that is not a canonical decimal integer names nothing.
    const badId = await server.api('GET', '/domains/abc', { key: apiKey });
    expect(badId.status).toBe(404);
    expect(badId.body).toStrictEqual({ error: 'Not found' });
  });

  it('serves health, metrics and an OpenAPI document generated from the routes', async () => {
    const server = await startTestServer(kind);
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toStrictEqual({ status: 'ok' });

    await fetch(`${server.url}/healthz`);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/mailsvc_http_requests_total\{method="GET",route="\/healthz",status="200"\} 2/);
    expect(metrics).toContain('mailsvc_process_cpu_user_seconds_total');

    const doc = await (await fetch(`${server.url}/api/v1/openapi.json`)).json();
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/v1/domains', '/api/v1/domains/{id}/verify', '/api/v1/api-keys']));
    expect(doc.paths['/api/v1/domains'].post.requestBody.content['application/json'].schema.required).toStrictEqual(['name']);
  });
});
