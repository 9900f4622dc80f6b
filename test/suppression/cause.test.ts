import { describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.ts';
import { sandboxEnv } from '../sandbox/env.ts';
import { until } from '../webhooks/world.ts';

describe.each(STORES)('GET /suppressions/{stream}/{address}: what caused the entry (%s)', (kind) => {
  it('gives the bounce that put an address on the list, explained by the classifier; none for a manual entry', async () => {
    const env = await sandboxEnv(kind, { roles: ['api', 'delivery'] });
    const id = await env.send({ to: 'bounced@sandbox.mailsvc.test', subject: 'Invoice' });
    await until(async () => (await env.detail(id)).status === 'bounced', 'the bounce');

    const res = await env.server.api('GET', '/suppressions/transactional/bounced@sandbox.mailsvc.test', { key: env.ws.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ address: 'bounced@sandbox.mailsvc.test', reason: 'bounce', email_id: id });
    expect(res.body.cause).toMatchObject({ event: 'email.bounced', bounce_type: 'permanent', status: '5.1.1', reason: 'user_unknown' });
    expect(res.body.cause.response).toContain('User unknown');
    expect(res.body.cause.decided_by.length).toBeGreaterThan(0);

    await env.server.api('POST', '/suppressions', { key: env.ws.apiKey, body: { address: 'hand@example.org', stream: 'transactional' } });
    expect((await env.server.api('GET', '/suppressions/transactional/hand@example.org', { key: env.ws.apiKey })).body.cause).toBeNull();
  });
});
