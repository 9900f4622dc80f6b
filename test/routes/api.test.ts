import { describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server.ts';
import { STORES } from '../helpers/stores.ts';

const SECRET = /^whsec_[0-9A-Za-z]{32}$/;

describe.each(STORES)('receiving domains and routes API (%s)', (kind) => {
  it('turns receiving on for a verified domain only, and shows its required MX record', async () => {
    const server = await startTestServer(kind);
    const { id: ws, apiKey } = await server.workspace();
    const pending = (await server.api('POST', '/domains', { key: apiKey, body: { name: 'pending.test' } })).body;
    const refused = await server.api('PATCH', `/domains/${pending.id}`, { key: apiKey, body: { inbound: true } });
    expect([refused.status, refused.body.error]).toStrictEqual([422, 'Domain pending.test must be verified before it can receive mail']);

    await server.verifiedDomain(ws, 'acme.test');
    const id = (await server.api('GET', '/domains', { key: apiKey })).body.data.find((d: { name: string }) => d.name === 'acme.test').id;
    const before = (await server.api('GET', `/domains/${id}`, { key: apiKey })).body;
    expect(before.inbound).toBe(false);
    expect(before.records.map((r: { purpose: string }) => r.purpose)).toStrictEqual(['dkim', 'return_path', 'spf', 'dmarc']);
    const on = await server.api('PATCH', `/domains/${id}`, { key: apiKey, body: { inbound: true } });
    expect(on.status).toBe(200);
    expect(on.body.inbound).toBe(true);
    expect(on.body.records.at(-1)).toStrictEqual({
      type: 'MX',
      name: 'acme.test',
      value: 'mail.mailsvc.test',
      priority: 10,
      purpose: 'inbound',
      required: true,
      verified: false,
    });
    const off = await server.api('PATCH', `/domains/${id}`, { key: apiKey, body: { inbound: false } });
    expect([off.body.inbound, off.body.records.length]).toStrictEqual([false, 4]);
  });

  it('creates, shows, lists, updates and deletes routes on the workspace’s receiving domains only', async () => {
    const server = await startTestServer(kind, { config: { webhooks: { allowPrivateAddresses: true } } });
    const { id: ws, apiKey } = await server.workspace();
    const other = await server.workspace();
    await server.verifiedDomain(ws, 'acme.test');
    await server.verifiedDomain(ws, 'quiet.test');
    await server.verifiedDomain(other.id, 'other.test');
    await server.services.domains.update(null, 'acme.test', { inbound: true });
    await server.services.domains.update(null, 'other.test', { inbound: true });

    const created = await server.api('POST', '/routes', { key: apiKey, body: { match: 'Support@ACME.test', url: 'http://127.0.0.1:9/in' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      match: 'support@acme.test',
      url: 'http://127.0.0.1:9/in',
      priority: 0,
      status: 'active',
      failure_count: 0,
      last_success_at: null,
    });
    expect(created.body.secret).toMatch(SECRET);
    const id = created.body.id;
    const tagged = await server.api('POST', '/routes', { key: apiKey, body: { match: '*+tickets@acme.test', url: 'http://127.0.0.1:9/t', priority: 3 } });
    expect(tagged.body.secret).not.toBe(created.body.secret);

    expect((await server.api('GET', `/routes/${id}`, { key: apiKey })).body).toStrictEqual(created.body);
    expect((await server.api('GET', '/routes', { key: apiKey })).body.data.map((r: { id: number }) => r.id)).toStrictEqual([id, tagged.body.id]);
    expect((await server.api('GET', '/routes', { key: other.apiKey })).body.data).toStrictEqual([]);
    // A route is no webhook endpoint, and the other way round.
    expect((await server.api('GET', '/webhooks', { key: apiKey })).body.data).toStrictEqual([]);
    expect((await server.api('GET', `/webhooks/${id}`, { key: apiKey })).status).toBe(404);
    const hook = (await server.api('POST', '/webhooks', { key: apiKey, body: { url: 'http://127.0.0.1:9/hook' } })).body;
    expect((await server.api('GET', `/routes/${hook.id}`, { key: apiKey })).status).toBe(404);

    for (const [method, path] of [
      ['GET', `/routes/${id}`],
      ['PATCH', `/routes/${id}`],
      ['DELETE', `/routes/${id}`],
      ['POST', `/routes/${id}/rotate-secret`],
      ['GET', `/routes/${id}/deliveries`],
    ]) {
      const res = await server.api(method, path, { key: other.apiKey, ...(method === 'PATCH' ? { body: {} } : {}) });
      expect([method, path, res.status, res.body]).toStrictEqual([method, path, 404, { error: 'Not found' }]);
    }

    const bad = [
      [{ match: 'a*b*@acme.test', url: 'http://127.0.0.1:9/x' }, 'Field `match` may hold one `*` only'],
      [{ match: 'a@other.test', url: 'http://127.0.0.1:9/x' }, 'Field `match`: other.test is not a domain of this workspace'],
      [{ match: 'a@nowhere.test', url: 'http://127.0.0.1:9/x' }, 'Field `match`: nowhere.test is not a domain of this workspace'],
      [{ match: 'a@quiet.test', url: 'http://127.0.0.1:9/x' }, /quiet\.test does not receive mail; turn it on first/],
      [{ match: 'a@acme.test', url: 'ftp://example.org/x' }, /http:\/\/ or https:\/\//],
      [{ match: 'a@acme.test', url: 'http://127.0.0.1:9/x', secret: 'x' }, /secret/],
    ] as const;
    for (const [body, message] of bad) {
      const res = await server.api('POST', '/routes', { key: apiKey, body });
      expect(res.status).toBe(422);
      expect(res.body.error).toMatch(message);
    }

    const patched = await server.api('PATCH', `/routes/${id}`, { key: apiKey, body: { match: '*@acme.test', priority: 7, url: 'http://127.0.0.1:10/new' } });
    expect(patched.body).toMatchObject({ id, match: '*@acme.test', priority: 7, url: 'http://127.0.0.1:10/new', secret: created.body.secret });
    const rotated = await server.api('POST', `/routes/${id}/rotate-secret`, { key: apiKey });
    expect(rotated.body.secret).toMatch(SECRET);
    expect(rotated.body.secret).not.toBe(created.body.secret);
    expect((await server.api('GET', `/routes/${id}/deliveries`, { key: apiKey })).body).toStrictEqual({ data: [], next_cursor: null });
    const status = await server.api('PATCH', `/routes/${id}`, { key: apiKey, body: { status: 'paused' } });
    expect([status.status, status.body.error]).toStrictEqual([422, 'Field `status` can only be set to `active`']);

    expect((await server.api('DELETE', `/routes/${id}`, { key: apiKey })).body).toStrictEqual({ id, deleted: true });
    expect((await server.api('GET', `/routes/${id}`, { key: apiKey })).status).toBe(404);
  });
});
