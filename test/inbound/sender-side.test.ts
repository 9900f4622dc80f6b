import { describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.ts';
import { startInbound } from './harness.ts';
import { dsn } from './reports.ts';
import { sendMail } from './smtp-client.ts';

describe.each(STORES)("a DSN refusing the sender's authentication (%s)", (kind) => {
  it('bounces the recipient as blocked, suppresses nothing and raises a warning on the sending domain', async () => {
    const h = await startInbound(kind);
    const sent = await h.delivered({ to: ['user@example.org'] });
    const [user] = sent.recipients;
    const diagnostic =
      "550 5.7.515 Access denied, sending domain [ACME.TEST] doesn't meet the required authentication level. The sender's domain in the 5322.From address doesn't meet the authentication requirements defined for the sender.";
    const r = await sendMail(
      h.port,
      '',
      [h.verp(user!.id)],
      dsn({ to: h.verp(user!.id), recipient: 'user@example.org', status: '5.7.515', diagnostic, originalMessageId: sent.message.message_id_header }),
    );
    expect(r.data!.code).toBe(250);

    const email = await h.email(sent.id);
    expect(email.recipients[0]).toMatchObject({ status: 'bounced' });
    expect(email.events.find((e: { event: string }) => e.event === 'email.bounced')).toMatchObject({ bounce_type: 'blocked', provider: { status: '5.7.515' } });
    expect((await h.suppression('transactional', 'user@example.org')).status).toBe(404);

    const list = await h.server.api('GET', '/domains', { key: h.apiKey });
    const acme = list.body.data.find((d: { name: string }) => d.name === 'acme.test');
    const shown = await h.server.api('GET', `/domains/${acme.id}`, { key: h.apiKey });
    expect(shown.body.warnings).toStrictEqual([{ code: 'sender_authentication', message: expect.stringContaining('5.7.515 Access denied'), at: expect.any(String) }]);
  });
});
