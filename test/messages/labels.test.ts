// A message's tags and metadata travel with it: returned by GET /emails/{id} and carried in
// every webhook payload of it (SPEC §15), delivered and bounced alike.
import { describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.ts';
import { sandboxEnv } from '../sandbox/env.ts';
import { startReceiver } from '../webhooks/receiver.ts';
import { until } from '../webhooks/world.ts';

describe.each(STORES)('tags and metadata in webhook payloads (%s)', (kind) => {
  it('adds the message’s tags and metadata to each of its events, and leaves untagged messages’ payloads as they were', async () => {
    const env = await sandboxEnv(kind, { roles: ['api', 'delivery', 'webhooks'] });
    const receiver = await startReceiver();
    const hook = await env.server.api('POST', '/webhooks', { key: env.ws.apiKey, body: { url: receiver.url, events: ['email.delivered', 'email.bounced'] } });
    expect(hook.status, hook.text).toBe(201);

    const tags = [
      { name: 'campaign', value: 'fall-2026' },
      { name: 'kind', value: 'welcome' },
    ];
    const metadata = { order_id: 'A-1001', customer: '42' };
    const tagged = await env.send({ to: ['someone@example.org', 'bounced@sandbox.mailsvc.test'], tags, metadata });
    const plain = await env.send({ to: 'other@example.org' });

    const payloads = (await receiver.waitFor(3)).map((r) => JSON.parse(r.raw.toString('utf8')));
    const ofTagged = payloads.filter((p) => p.email_id === tagged);
    expect(ofTagged.map((p) => p.event).sort()).toStrictEqual(['email.bounced', 'email.delivered']);
    for (const p of ofTagged) expect(p).toMatchObject({ tags, metadata });
    const [ofPlain] = payloads.filter((p) => p.email_id === plain);
    expect(ofPlain).toMatchObject({ event: 'email.delivered', recipient: 'other@example.org' });
    expect(Object.keys(ofPlain)).not.toContain('tags');
    expect(Object.keys(ofPlain)).not.toContain('metadata');

    // The message's own record says the same, and its events are the payloads as sent.
    const detail = await until(
      async () => {
        const d = await env.detail(tagged);
        return d.events.length === 2 && d;
      },
      'both events of the tagged message',
      5000,
    );
    expect(detail).toMatchObject({ tags, metadata });
    for (const e of detail.events) expect(e).toMatchObject({ tags, metadata });
  });
});
