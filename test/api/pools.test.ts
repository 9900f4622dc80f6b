import { describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.ts';
import { startTestServer } from '../helpers/server.ts';

const POOL_CONFIG = {
  delivery: {
    sourceAddresses: [
      { address: '127.0.0.10', ehlo: 'mta1.pools.test' },
      { address: '127.0.0.11', ehlo: 'mta2.pools.test' },
    ],
    pools: { transactional: ['127.0.0.10'], bulk: ['127.0.0.11'] },
    streamPools: { broadcast: 'bulk' },
  },
};

describe.each(STORES)('a domain’s sending pool through the API (%s)', (kind) => {
  it('is set and cleared with PATCH, beside the tracking switches, and shows on every read', async () => {
    const server = await startTestServer(kind, { config: POOL_CONFIG });
    const { apiKey } = await server.workspace();
    const d = (await server.api('POST', '/domains', { key: apiKey, body: { name: 'pool.test' } })).body;
    expect(d.pool).toBeNull();

    const set = await server.api('PATCH', `/domains/${d.id}`, { key: apiKey, body: { pool: 'bulk', open_tracking: true } });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ pool: 'bulk', open_tracking: true, click_tracking: false });
    expect((await server.api('GET', `/domains/${d.id}`, { key: apiKey })).body.pool).toBe('bulk');
    expect((await server.api('GET', '/domains', { key: apiKey })).body.data.map((x: { pool: string }) => x.pool)).toStrictEqual(['bulk']);
    // Tracking alone leaves the pool as it is.
    expect((await server.api('PATCH', `/domains/${d.id}`, { key: apiKey, body: { click_tracking: true } })).body.pool).toBe('bulk');

    const cleared = await server.api('PATCH', `/domains/${d.id}`, { key: apiKey, body: { pool: null } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.pool).toBeNull();
  });

  it('refuses a pool the configuration does not name with 422, changing nothing', async () => {
    const server = await startTestServer(kind, { config: POOL_CONFIG });
    const { apiKey } = await server.workspace();
    const d = (await server.api('POST', '/domains', { key: apiKey, body: { name: 'pool.test' } })).body;
    await server.api('PATCH', `/domains/${d.id}`, { key: apiKey, body: { pool: 'transactional' } });

    const unknown = await server.api('PATCH', `/domains/${d.id}`, { key: apiKey, body: { pool: 'blk', open_tracking: true } });
    expect(unknown.status).toBe(422);
    expect(unknown.body).toStrictEqual({ error: 'Unknown pool "blk": delivery.pools has transactional, bulk' });
    // `none` clears on the command line; through the API it is null, and no pool is named so.
    expect((await server.api('PATCH', `/domains/${d.id}`, { key: apiKey, body: { pool: 'none' } })).status).toBe(422);
    for (const pool of [7, '', ['bulk']]) {
      const wrong = await server.api('PATCH', `/domains/${d.id}`, { key: apiKey, body: { pool } });
      expect(wrong.status, JSON.stringify(pool)).toBe(422);
      expect(wrong.body.error).toMatch(/`pool`/);
    }
    expect((await server.api('GET', `/domains/${d.id}`, { key: apiKey })).body).toMatchObject({ pool: 'transactional', open_tracking: false });
  });

  it('names no pool when none is configured', async () => {
    const server = await startTestServer(kind);
    const { apiKey } = await server.workspace();
    const d = (await server.api('POST', '/domains', { key: apiKey, body: { name: 'plain.test' } })).body;
    const res = await server.api('PATCH', `/domains/${d.id}`, { key: apiKey, body: { pool: 'bulk' } });
    expect(res.status).toBe(422);
    expect(res.body).toStrictEqual({ error: 'Unknown pool "bulk": no pools are configured (delivery.pools)' });
    expect((await server.api('PATCH', `/domains/${d.id}`, { key: apiKey, body: { pool: null } })).body.pool).toBeNull();
  });

  it('is for workspace keys of the domain’s own workspace only', async () => {
    const server = await startTestServer(kind, { config: POOL_CONFIG });
    const owner = await server.workspace('owner');
    const other = await server.workspace('other');
    const d = (await server.api('POST', '/domains', { key: owner.apiKey, body: { name: 'mine.test' } })).body;
    const scoped = (await server.api('POST', '/api-keys', { key: owner.apiKey, body: { domain: 'mine.test' } })).body.api_key;

    const byScoped = await server.api('PATCH', `/domains/${d.id}`, { key: scoped, body: { pool: 'bulk' } });
    expect(byScoped.status).toBe(403);
    expect(byScoped.body.error).toMatch(/domain-scoped API key cannot change domains/);
    expect((await server.api('GET', `/domains/${d.id}`, { key: scoped })).body.pool).toBeNull();

    const byOther = await server.api('PATCH', `/domains/${d.id}`, { key: other.apiKey, body: { pool: 'bulk' } });
    expect(byOther).toMatchObject({ status: 404, body: { error: 'Not found' } });
    expect((await server.api('GET', `/domains/${d.id}`, { key: owner.apiKey })).body.pool).toBeNull();
  });

  it('is in the OpenAPI document', async () => {
    const server = await startTestServer(kind);
    const doc = (await server.api('GET', '/openapi.json')).body;
    expect(doc.components.schemas.Domain.properties.pool).toMatchObject({ type: 'string', nullable: true });
    expect(doc.components.schemas.Domain.required).toContain('pool');
    const patch = doc.paths['/api/v1/domains/{id}'].patch.requestBody.content['application/json'].schema;
    expect(patch.properties.pool).toMatchObject({ type: 'string', nullable: true, minLength: 1 });
  });
});
