import { describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.ts';
import { RETURN_PATH, startInbound } from './harness.ts';
import { dsn, vacation } from './reports.ts';
import { sendMail } from './smtp-client.ts';

describe.each(STORES)('inbound DSNs (%s)', (kind) => {
  it('a DSN to the VERP address of a delivered message bounces that recipient, suppresses it and shows in GET /emails/{id}', async () => {
    const h = await startInbound(kind);
    const sent = await h.delivered({ to: ['user@example.org', 'other@example.org'] });
    const [user, other] = sent.recipients;
    expect(user!.status).toBe('delivered');
    const diagnostic = '550 5.1.1 <user@example.org>: Recipient address rejected: User unknown in virtual mailbox table';

    const r = await sendMail(
      h.port,
      '',
      [h.verp(user!.id)],
      dsn({ to: h.verp(user!.id), recipient: 'user@example.org', diagnostic, originalMessageId: sent.message.message_id_header }),
    );
    expect(r.mail.code).toBe(250);
    expect(r.rcpt[0]!.code).toBe(250);
    expect(r.data!.code).toBe(250);
    expect(r.data!.text).toMatch(/^2\.0\.0 Ok: report \d+ stored$/);

    const email = await h.email(sent.id);
    expect(email.recipients).toEqual([
      expect.objectContaining({ address: 'user@example.org', status: 'bounced', last_response: diagnostic }),
      expect.objectContaining({ address: 'other@example.org', status: 'delivered' }),
    ]);
    const bounced = email.events.filter((e: { event: string }) => e.event === 'email.bounced');
    expect(bounced).toStrictEqual([
      {
        event: 'email.bounced',
        occurred_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        email_id: sent.id,
        recipient: 'user@example.org',
        bounce_type: 'permanent',
        provider: { response: diagnostic, reporting_mta: 'mx.example.org', status: '5.1.1', smtp_code: 550 },
      },
    ]);
    expect((await h.suppression('transactional', 'user@example.org')).status).toBe(200);
    expect((await h.suppression('transactional', 'other@example.org')).status).toBe(404);
    expect(other!.status).toBe('delivered');

    const [stored] = await h.reports();
    expect(stored).toMatchObject({ rcpt: h.verp(user!.id), mail_from: '', kind: 'bounce', proof: 'verp', email_id: sent.id, recipient_id: user!.id, outcome: 'applied' });

    // The same report again (a sender that lost our 250): stored, no second event.
    const again = await sendMail(
      h.port,
      '',
      [h.verp(user!.id)],
      dsn({ to: h.verp(user!.id), recipient: 'user@example.org', diagnostic, originalMessageId: sent.message.message_id_header }),
    );
    expect(again.data!.code).toBe(250);
    expect((await h.email(sent.id)).events.filter((e: { event: string }) => e.event === 'email.bounced')).toHaveLength(1);
    expect((await h.reports()).map((x) => x.outcome)).toEqual(['applied', 'duplicate']);
  });

  it('a transient DSN (mailbox full) bounces without suppression; a delay report fires transient and keeps the status', async () => {
    const h = await startInbound(kind);
    const sent = await h.delivered({ to: ['full@example.org', 'slow@example.org'] });
    const [full, slow] = sent.recipients;

    const fullDiag = '552 5.2.2 <full@example.org>: Mailbox full';
    await sendMail(h.port, '', [h.verp(full!.id)], dsn({ to: h.verp(full!.id), recipient: 'full@example.org', status: '5.2.2', diagnostic: fullDiag }));
    const delayDiag = '451 4.4.1 Connection timed out';
    await sendMail(
      h.port,
      '',
      [h.verp(slow!.id)],
      dsn({ to: h.verp(slow!.id), recipient: 'slow@example.org', action: 'delayed', status: '4.4.1', diagnostic: delayDiag }),
    );

    const email = await h.email(sent.id);
    expect(email.recipients.map((r: { status: string }) => r.status)).toEqual(['bounced', 'delivered']);
    expect(email.events.filter((e: { event: string }) => e.event === 'email.bounced')).toEqual([
      expect.objectContaining({ recipient: 'full@example.org', bounce_type: 'transient', provider: expect.objectContaining({ response: fullDiag, status: '5.2.2' }) }),
      expect.objectContaining({ recipient: 'slow@example.org', bounce_type: 'transient', provider: expect.objectContaining({ response: delayDiag, status: '4.4.1' }) }),
    ]);
    expect((await h.suppression('transactional', 'full@example.org')).status).toBe(404);
    expect((await h.suppression('transactional', 'slow@example.org')).status).toBe(404);
  });

  it('refuses at RCPT a VERP address whose token is forged or altered, and nothing is stored', async () => {
    const h = await startInbound(kind);
    const sent = await h.delivered();
    const real = h.verp(sent.recipients[0]!.id);
    const token = real.slice(2, real.indexOf('@'));
    const altered = `b+${token.slice(0, -1)}${token.endsWith('a') ? 'b' : 'a'}@${RETURN_PATH}`;
    for (const address of [altered, `b+aaaaaaaaaaaaaaaaaaaaaaaaaaaa@${RETURN_PATH}`, `b+@${RETURN_PATH}`]) {
      const r = await sendMail(h.port, '', [address], dsn({ to: address, recipient: 'user@example.org' }));
      expect(r.rcpt[0]).toEqual({ code: 550, text: '5.7.1 Unknown return-path address' });
      expect(r.data).toBeNull();
    }
    // A token signed for another purpose (unsubscribe) is no VERP token.
    const cross = `b+${h.server.services.tokens.unsubscribe.signId(sent.recipients[0]!.id)}@${RETURN_PATH}`;
    expect((await sendMail(h.port, '', [cross], 'x')).rcpt[0]!.code).toBe(550);
    expect(await h.reports()).toEqual([]);
    expect((await h.email(sent.id)).recipients[0].status).toBe('delivered');
  });

  it('stores a DSN sent to postmaster@ without effect, even when it quotes our Message-ID', async () => {
    const h = await startInbound(kind);
    const sent = await h.delivered();
    const r = await sendMail(
      h.port,
      '',
      [`postmaster@${RETURN_PATH}`],
      dsn({ to: `postmaster@${RETURN_PATH}`, recipient: 'user@example.org', originalMessageId: sent.message.message_id_header }),
    );
    expect(r.rcpt[0]!.code).toBe(250);
    expect(r.data!.code).toBe(250);
    const email = await h.email(sent.id);
    expect(email.recipients[0].status).toBe('delivered');
    expect(email.events.map((e: { event: string }) => e.event)).toEqual(['email.delivered']);
    expect((await h.suppression('transactional', 'user@example.org')).status).toBe(404);
    const [stored] = await h.reports();
    expect(stored).toMatchObject({ rcpt: `postmaster@${RETURN_PATH}`, kind: 'bounce', proof: null, email_id: null, outcome: 'no_effect' });
    expect(Buffer.from(stored.raw).toString()).toContain('Final-Recipient: rfc822; user@example.org');
  });

  it('bounces a forwarded address whose DSN names ours only in Original-Recipient', async () => {
    const h = await startInbound(kind);
    const sent = await h.delivered({ to: 'old@example.org' });
    const verp = h.verp(sent.recipients[0]!.id);
    await sendMail(
      h.port,
      '',
      [verp],
      dsn({ to: verp, recipient: 'new@forward.example', originalRecipient: 'old@example.org', diagnostic: '550 5.1.1 <new@forward.example>: User unknown' }),
    );
    const email = await h.email(sent.id);
    expect(email.recipients[0]).toMatchObject({ address: 'old@example.org', status: 'bounced', last_response: '550 5.1.1 <new@forward.example>: User unknown' });
    expect(email.events[1]).toMatchObject({ event: 'email.bounced', recipient: 'old@example.org', bounce_type: 'permanent' });
  });

  it('ignores report recipients other than the one the token names, and auto-replies', async () => {
    const h = await startInbound(kind);
    const sent = await h.delivered();
    const verp = h.verp(sent.recipients[0]!.id);
    await sendMail(h.port, '', [verp], dsn({ to: verp, recipient: 'someone-else@example.org' }));
    await sendMail(h.port, 'kim@example.org', [verp], vacation(verp));
    // A success DSN (Action: delivered) reports no failure.
    await sendMail(h.port, '', [verp], dsn({ to: verp, recipient: 'user@example.org', action: 'delivered', status: '2.0.0', diagnostic: '250 2.0.0 Ok' }));
    const email = await h.email(sent.id);
    expect(email.events.map((e: { event: string }) => e.event)).toEqual(['email.delivered']);
    expect(email.recipients[0].status).toBe('delivered');
    expect((await h.reports()).map((r) => [r.kind, r.proof, r.outcome])).toEqual([
      ['bounce', 'verp', 'no_effect'],
      ['autoreply', 'verp', 'no_effect'],
      ['bounce', 'verp', 'no_effect'],
    ]);
    const metrics = await h.server.services.metrics.registry.getSingleMetricAsString('mailsvc_inbound_reports_total');
    expect(metrics).toContain('mailsvc_inbound_reports_total{kind="bounce",outcome="no_effect"} 2');
    expect(metrics).toContain('mailsvc_inbound_reports_total{kind="autoreply",outcome="no_effect"} 1');
  });
});
