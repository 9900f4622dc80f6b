import { describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.ts';
import { deliveryEnv } from './env.ts';

// Replies as Gmail and Outlook.com send them to senders whose mail fails authentication
// (Gmail's bulk-sender rules since February 2024, Outlook.com's since May 2025).
const GMAIL =
  '5.7.26 This mail has been blocked because the sender is unauthenticated. Gmail requires all senders to authenticate with either SPF or DKIM. Authentication results: DKIM = did not pass SPF [acme.test] with ip: [192.0.2.22] = did not pass';
const OUTLOOK =
  "5.7.515 Access denied, sending domain [ACME.TEST] doesn't meet the required authentication level. The sender's domain in the 5322.From address doesn't meet the authentication requirements defined for the sender.";

describe.each(STORES)("replies that refuse the sender's authentication (%s)", (kind) => {
  it('are blocked bounces that suppress no recipient and raise a warning on the sending domain', async () => {
    const env = await deliveryEnv(kind);
    env.mx('dest.test');
    env.sink.script('gmail@dest.test', [{ rcpt: { reply: { code: 550, message: GMAIL } } }]);
    env.sink.script('outlook@dest.test', [{ data: { reply: { code: 550, message: OUTLOOK } } }]);

    const id = await env.send({ to: ['gmail@dest.test', 'outlook@dest.test'] });
    expect(await env.worker().runOnce()).toMatchObject({ claimed: 2, bounced: 2 });
    const detail = await env.detail(id);
    for (const r of detail.recipients) expect(r).toMatchObject({ status: 'bounced', attempts: 1 });
    for (const e of detail.events) expect(e).toMatchObject({ event: 'email.bounced', bounce_type: 'blocked' });
    expect(detail.events.map((e: { provider: { status: string } }) => e.provider.status).sort()).toStrictEqual(['5.7.26', '5.7.515']);

    for (const address of ['gmail@dest.test', 'outlook@dest.test']) {
      expect((await env.server.api('GET', `/suppressions/transactional/${address}`, { key: env.ws.apiKey })).status).toBe(404);
    }
    // The next message to the same addresses is queued, not suppressed.
    const next = await env.send({ to: ['gmail@dest.test', 'outlook@dest.test'] });
    expect((await env.detail(next)).recipients.map((r: { status: string }) => r.status)).toStrictEqual(['queued', 'queued']);

    const domains = await env.server.api('GET', '/domains', { key: env.ws.apiKey });
    const acme = domains.body.data.find((d: { name: string }) => d.name === env.domain);
    const shown = await env.server.api('GET', `/domains/${acme.id}`, { key: env.ws.apiKey });
    expect(shown.status).toBe(200);
    expect(shown.body.warnings).toHaveLength(1);
    expect(shown.body.warnings[0]).toMatchObject({ code: 'sender_authentication', at: expect.any(String) });
    expect(shown.body.warnings[0].message).toMatch(/SPF, DKIM or DMARC .*mailsvc doctor.* mx\.dest\.test replied: 550/);
  });

  it('a user-unknown reply still suppresses and raises no warning', async () => {
    const env = await deliveryEnv(kind);
    env.mx('dest.test');
    env.sink.script('gone@dest.test', [{ rcpt: { reply: { code: 550, message: '5.1.1 <gone@dest.test>: Recipient address rejected: User unknown' } } }]);
    await env.send({ to: 'gone@dest.test' });
    await env.worker().runOnce();
    expect((await env.server.api('GET', '/suppressions/transactional/gone@dest.test', { key: env.ws.apiKey })).status).toBe(200);
    const domains = await env.server.api('GET', '/domains', { key: env.ws.apiKey });
    const acme = domains.body.data.find((d: { name: string }) => d.name === env.domain);
    expect((await env.server.api('GET', `/domains/${acme.id}`, { key: env.ws.apiKey })).body.warnings).toStrictEqual([]);
  });
});
