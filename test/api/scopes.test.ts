import { describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.ts';
import { startTestServer } from '../helpers/server.ts';

describe.each(STORES)('key scopes (%s)', (kind) => {
  it('lets a domain-scoped key read its domain but manage nothing', async () => {
    const server = await startTestServer(kind);
    const { apiKey } = await server.workspace('owner');
    const a = (await server.api('POST', '/domains', { key: apiKey, body: { name: 'a.test' } })).body;
    const b = (await server.api('POST', '/domains', { key: apiKey, body: { name: 'b.test' } })).body;
    const scoped = await server.api('POST', '/api-keys', { key: apiKey, body: { name: 'only a', domain: 'a.test' } });
    expect(scoped.status).toBe(201);
    expect(scoped.body).toMatchObject({ scope: 'domain:a.test', name: 'only a' });
    expect(scoped.body.api_key).toMatch(/^mk_[0-9A-Za-z]{32}$/);
    expect(scoped.body.prefix).toBe(scoped.body.api_key.slice(0, 8));
    const dk = scoped.body.api_key;

    const listed = await server.api('GET', '/domains', { key: dk });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((d: { name: string }) => d.name)).toStrictEqual(['a.test']);
    expect((await server.api('GET', `/domains/${a.id}`, { key: dk })).status).toBe(200);
    expect((await server.api('GET', `/domains/${b.id}`, { key: dk })).status).toBe(404);

    const refusals = [
      await server.api('GET', '/api-keys', { key: dk }),
      await server.api('POST', '/api-keys', { key: dk, body: { name: 'escalate' } }),
      await server.api('DELETE', '/api-keys/1', { key: dk }),
      await server.api('POST', '/domains', { key: dk, body: { name: 'c.test' } }),
      await server.api('PATCH', `/domains/${a.id}`, { key: dk, body: { open_tracking: true } }),
      await server.api('DELETE', `/domains/${a.id}`, { key: dk }),
      await server.api('POST', `/domains/${a.id}/verify`, { key: dk }),
    ];
    for (const res of refusals) {
      expect(res.status).toBe(403);
      expect(Object.keys(res.body)).toStrictEqual(['error']);
      expect(res.body.error).toMatch(/domain-scoped API key cannot/);
    }
    // Nothing changed.
    expect((await server.api('GET', `/domains/${a.id}`, { key: apiKey })).body.open_tracking).toBe(false);
    expect((await server.api('GET', '/api-keys', { key: apiKey })).body.data).toHaveLength(2);
  });

  it('hides one workspace’s domains and keys from another workspace', async () => {
    const server = await startTestServer(kind);
    const one = await server.workspace('one');
    const two = await server.workspace('two');
    const domain = (await server.api('POST', '/domains', { key: one.apiKey, body: { name: 'one.test' } })).body;
    const keys = (await server.api('GET', '/api-keys', { key: one.apiKey })).body.data;

    for (const [method, path, body] of [
      ['GET', `/domains/${domain.id}`],
      ['PATCH', `/domains/${domain.id}`, { click_tracking: true }],
      ['DELETE', `/domains/${domain.id}`],
      ['POST', `/domains/${domain.id}/verify`],
      ['DELETE', `/api-keys/${keys[0].id}`],
    ] as const) {
      const res = await server.api(method, path, { key: two.apiKey, body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body).toStrictEqual({ error: 'Not found' });
    }
    expect((await server.api('GET', '/domains', { key: two.apiKey })).body.data).toStrictEqual([]);
    const twoDomain = await server.api('POST', '/api-keys', { key: two.apiKey, body: { domain: 'one.test' } });
    expect(twoDomain.status).toBe(422);
    expect((await server.api('GET', '/domains', { key: one.apiKey })).body.data).toHaveLength(1);
  });

  it('turns tracking on and off with PATCH', async () => {
    const server = await startTestServer(kind);
    const { apiKey } = await server.workspace();
    const d = (await server.api('POST', '/domains', { key: apiKey, body: { name: 'track.test' } })).body;
    expect(d).toMatchObject({ open_tracking: false, click_tracking: false });
    const on = await server.api('PATCH', `/domains/${d.id}`, { key: apiKey, body: { open_tracking: true } });
    expect(on.body).toMatchObject({ open_tracking: true, click_tracking: false });
    const wrong = await server.api('PATCH', `/domains/${d.id}`, { key: apiKey, body: { click_tracking: 'yes' } });
    expect(wrong.status).toBe(422);
    expect(wrong.body).toStrictEqual({ error: 'Field `click_tracking` must be a boolean' });
    const del = await server.api('DELETE', `/domains/${d.id}`, { key: apiKey });
    expect(del.body).toStrictEqual({ id: d.id, name: 'track.test', deleted: true });
    expect((await server.api('GET', `/domains/${d.id}`, { key: apiKey })).status).toBe(404);
  });
});
