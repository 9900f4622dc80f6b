import { describe, expect, it, onTestFinished } from 'vitest';
import { startTestDns } from '../helpers/dns-server.ts';
import { startTestServer } from '../helpers/server.ts';
import { STORES } from '../helpers/stores.ts';

const SECRET = /^whsec_[0-9A-Za-z]{32}$/;

describe.each(STORES)('webhooks API (%s)', (kind) => {
  it('creates, shows, lists, updates, rotates and deletes endpoints of the caller’s workspace only', async () => {
    const server = await startTestServer(kind, { config: { webhooks: { allowPrivateAddresses: true } } });
    const { apiKey } = await server.workspace();
    const other = await server.workspace();

    const created = await server.api('POST', '/webhooks', { key: apiKey, body: { url: 'http://127.0.0.1:9/hook', events: ['email.bounced', 'email.bounced'] } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ url: 'http://127.0.0.1:9/hook', events: ['email.bounced'], status: 'active', failure_count: 0, last_success_at: null });
    expect(created.body.secret).toMatch(SECRET);
    const id = created.body.id;

    const all = await server.api('POST', '/webhooks', { key: apiKey, body: { url: 'https://hooks.example.org/all' } });
    expect(all.body.events).toStrictEqual(['email.delivered', 'email.bounced', 'email.opened', 'email.clicked', 'email.complained', 'email.unsubscribed']);
    expect(all.body.secret).not.toBe(created.body.secret);

    const shown = await server.api('GET', `/webhooks/${id}`, { key: apiKey });
    expect(shown.body).toStrictEqual(created.body);
    expect((await server.api('GET', '/webhooks', { key: apiKey })).body.data.map((w: { id: number }) => w.id)).toStrictEqual([id, all.body.id]);
    expect((await server.api('GET', '/webhooks', { key: other.apiKey })).body.data).toStrictEqual([]);
    for (const [method, path] of [
      ['GET', `/webhooks/${id}`],
      ['PATCH', `/webhooks/${id}`],
      ['DELETE', `/webhooks/${id}`],
      ['POST', `/webhooks/${id}/rotate-secret`],
      ['GET', `/webhooks/${id}/deliveries`],
    ]) {
      const res = await server.api(method, path, { key: other.apiKey, ...(method === 'PATCH' ? { body: {} } : {}) });
      expect([method, path, res.status, res.body]).toStrictEqual([method, path, 404, { error: 'Not found' }]);
    }

    const patched = await server.api('PATCH', `/webhooks/${id}`, { key: apiKey, body: { url: 'http://127.0.0.1:10/new', events: ['email.delivered'] } });
    expect(patched.body).toMatchObject({ id, url: 'http://127.0.0.1:10/new', events: ['email.delivered'], secret: created.body.secret });
    const rotated = await server.api('POST', `/webhooks/${id}/rotate-secret`, { key: apiKey });
    expect(rotated.body.secret).toMatch(SECRET);
    expect(rotated.body.secret).not.toBe(created.body.secret);
    expect((await server.api('GET', `/webhooks/${id}`, { key: apiKey })).body.secret).toBe(rotated.body.secret);

    const bad = [
      [{ url: 'ftp://example.org/x' }, /http:\/\/ or https:\/\//],
      [{ url: 'not a url' }, /`url` is not a valid URL/],
      [{ url: 'https://example.org', events: ['email.sent'] }, /unknown event "email.sent"/],
      [{ url: 'https://example.org', events: [] }, /at least one event/],
      [{ url: 'https://example.org', secret: 'x' }, /secret/],
    ] as const;
    for (const [body, message] of bad) {
      const res = await server.api('POST', '/webhooks', { key: apiKey, body });
      expect(res.status).toBe(422);
      expect(res.body.error).toMatch(message);
    }
    const status = await server.api('PATCH', `/webhooks/${id}`, { key: apiKey, body: { status: 'paused' } });
    expect([status.status, status.body.error]).toStrictEqual([422, 'Field `status` can only be set to `active`']);
    const since = await server.api('POST', `/webhooks/${id}/replay`, { key: apiKey, body: { since: 'yesterday' } });
    expect([since.status, since.body.error]).toStrictEqual([422, 'Field `since` must be an ISO 8601 timestamp']);

    expect((await server.api('DELETE', `/webhooks/${id}`, { key: apiKey })).body).toStrictEqual({ id, deleted: true });
    expect((await server.api('GET', `/webhooks/${id}`, { key: apiKey })).status).toBe(404);
  });

  it('refuses every webhook operation to a domain-scoped key with 403', async () => {
    const server = await startTestServer(kind);
    const { apiKey } = await server.workspace();
    await server.api('POST', '/domains', { key: apiKey, body: { name: 'a.test' } });
    const scoped = (await server.api('POST', '/api-keys', { key: apiKey, body: { domain: 'a.test' } })).body.api_key;
    const id = (await server.api('POST', '/webhooks', { key: apiKey, body: { url: 'https://hooks.example.org/x' } })).body.id;
    const calls: [string, string, unknown?][] = [
      ['GET', '/webhooks'],
      ['POST', '/webhooks', { url: 'https://hooks.example.org/y' }],
      ['GET', `/webhooks/${id}`],
      ['PATCH', `/webhooks/${id}`, { status: 'active' }],
      ['DELETE', `/webhooks/${id}`],
      ['POST', `/webhooks/${id}/rotate-secret`],
      ['GET', `/webhooks/${id}/deliveries`],
      ['POST', `/webhooks/${id}/replay`, { since: '2026-01-01T00:00:00Z' }],
    ];
    for (const [method, path, body] of calls) {
      const res = await server.api(method, path, { key: scoped, body });
      expect([method, path, res.status, res.body]).toStrictEqual([method, path, 403, { error: 'A domain-scoped API key cannot manage webhooks; use a workspace key' }]);
    }
    expect((await server.api('GET', `/webhooks/${id}`, { key: apiKey })).status).toBe(200);
  });

  it('with the default config refuses URLs on loopback, private, link-local and unique-local addresses at registration', async () => {
    const dns = await startTestDns();
    onTestFinished(() => dns.close());
    dns.set('inside.example.org', 'A', '127.0.0.1');
    dns.set('metadata.example.org', 'A', '169.254.169.254');
    dns.set('public.example.org', 'A', '93.184.216.34');
    const server = await startTestServer(kind, { config: { dns: { servers: [dns.address], timeout: 1 } } });
    const { apiKey } = await server.workspace();
    const refused: [string, string][] = [
      ['http://127.0.0.1:8080/hook', '127.0.0.1'],
      ['http://169.254.169.254/latest/meta-data', '169.254.169.254'],
      ['http://localhost:3000/', '127.0.0.1'],
      ['http://inside.example.org/hook', '127.0.0.1'],
      ['http://metadata.example.org/hook', '169.254.169.254'],
      ['http://10.1.2.3/', '10.1.2.3'],
      ['http://172.20.0.1/', '172.20.0.1'],
      ['http://192.168.1.1/', '192.168.1.1'],
      ['http://[::1]/', '::1'],
      ['http://[fd00::1]/', 'fd00::1'],
      ['http://[fe80::1]/', 'fe80::1'],
      ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1'],
      ['http://0.0.0.0/', '0.0.0.0'],
      ['http://2130706433/', '127.0.0.1'],
    ];
    for (const [url, address] of refused) {
      const res = await server.api('POST', '/webhooks', { key: apiKey, body: { url } });
      expect([url, res.status]).toStrictEqual([url, 422]);
      expect(res.body.error).toContain(`resolves to ${address}, not a global unicast address`);
    }
    expect((await server.api('POST', '/webhooks', { key: apiKey, body: { url: 'https://public.example.org/hook' } })).status).toBe(201);
    const id = (await server.api('POST', '/webhooks', { key: apiKey, body: { url: 'https://8.8.8.8/hook' } })).body.id;
    expect((await server.api('PATCH', `/webhooks/${id}`, { key: apiKey, body: { url: 'http://192.168.0.10/' } })).status).toBe(422);
  });
});
