import { describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server.ts';
import { STORES } from '../helpers/stores.ts';
import { signatureValid, startReceiver } from './receiver.ts';

describe.each(STORES)('POST /webhooks/{id}/test (%s)', (kind) => {
  it("posts a signed test event now and gives the receiver's answer, without queueing or logging it", async () => {
    const server = await startTestServer(kind, { config: { webhooks: { allowPrivateAddresses: true, timeout: 2 } } });
    const ws = await server.workspace();
    const receiver = await startReceiver((_req, n) => (n === 0 ? { status: 200, body: 'got it' } : { status: 503, body: 'down for maintenance' }));
    const hook = await server.api('POST', '/webhooks', { key: ws.apiKey, body: { url: receiver.url } });

    const ok = await server.api('POST', `/webhooks/${hook.body.id}/test`, { key: ws.apiKey });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ ok: true, response_code: 200, response_body: 'got it', error: null });
    const [req] = await receiver.waitFor(1);
    expect(signatureValid(req, hook.body.secret)).toBe(true);
    expect(JSON.parse(req.raw.toString()).event).toBe('email.delivered');

    const failed = await server.api('POST', `/webhooks/${hook.body.id}/test`, { key: ws.apiKey });
    expect(failed.body).toMatchObject({ ok: false, response_code: 503, response_body: 'down for maintenance' });
    expect((await server.api('GET', `/webhooks/${hook.body.id}/deliveries`, { key: ws.apiKey })).body.data).toEqual([]);
    expect((await server.api('GET', `/webhooks/${hook.body.id}`, { key: ws.apiKey })).body.failure_count).toBe(0);
  });
});
