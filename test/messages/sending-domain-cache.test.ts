import { describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.ts';
import { startTestServer } from '../helpers/server.ts';

// Verified sending domains are cached for a few seconds; a change made through this server
// must still count from the next request.
describe.each(STORES)('the sending-domain check after a change (%s)', (kind) => {
  it('refuses mail from a domain at once after it was removed through the API', async () => {
    const server = await startTestServer(kind);
    const ws = await server.workspace();
    await server.verifiedDomain(ws.id, 'acme.test');
    const send = () => server.api('POST', '/emails', { key: ws.apiKey, body: { from: 'news@acme.test', to: 'user@example.org', subject: 'Hi', text: 'Hi' } });
    expect((await send()).status).toBe(201);
    const domain = (await server.api('GET', '/domains', { key: ws.apiKey })).body.data[0];
    expect((await server.api('DELETE', `/domains/${domain.id}`, { key: ws.apiKey })).status).toBe(200);
    const refused = await send();
    expect(refused.status).toBe(422);
    expect(refused.body.error).toBe('Field `from`: domain acme.test is not a domain of this workspace; add and verify it first');
  });
});
