import { describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.ts';
import { RETURN_PATH, startInbound } from './harness.ts';
import { arf } from './reports.ts';
import { sendMail } from './smtp-client.ts';

const FBL = `fbl@${RETURN_PATH}`;
const events = (email: { events: { event: string }[] }) => email.events.map((e) => e.event);

describe.each(STORES)('inbound ARF reports (%s)', (kind) => {
  it('abuse fires email.complained and suppresses in that stream only; opt-out fires email.unsubscribed; auth-failure fires nothing', async () => {
    const h = await startInbound(kind);
    const abuse = await h.delivered({ to: 'angry@example.org', stream: 'broadcast' });
    const optOut = await h.delivered({ to: 'done@example.org', stream: 'broadcast' });
    const auth = await h.delivered({ to: 'auth@example.org' });

    const r = await sendMail(
      h.port,
      'fbl-bounces@isp.example',
      [FBL],
      arf({ feedbackType: 'abuse', recipient: 'angry@example.org', originalMessageId: abuse.message.message_id_header }),
    );
    expect(r.rcpt[0]!.code).toBe(250);
    expect(r.data!.code).toBe(250);
    await sendMail(
      h.port,
      'fbl-bounces@isp.example',
      [FBL],
      arf({ feedbackType: 'opt-out', recipient: 'done@example.org', originalMessageId: optOut.message.message_id_header }),
    );
    await sendMail(
      h.port,
      'fbl-bounces@isp.example',
      [FBL],
      arf({ feedbackType: 'auth-failure', recipient: 'auth@example.org', originalMessageId: auth.message.message_id_header }),
    );

    const complained = await h.email(abuse.id);
    expect(events(complained)).toEqual(['email.delivered', 'email.complained']);
    expect(complained.events[1]).toStrictEqual({
      event: 'email.complained',
      occurred_at: expect.any(String),
      email_id: abuse.id,
      recipient: 'angry@example.org',
      provider: {
        response: 'This is an email abuse report for an email message received from IP 192.0.2.25 on Sat, 21 Nov 2026 10:00:01 +0000.',
        reporting_mta: 'fbl.isp.example',
        feedback_type: 'abuse',
      },
    });
    // A complaint is not a bounce: the recipient stays delivered.
    expect(complained.recipients[0].status).toBe('delivered');
    expect((await h.suppression('broadcast', 'angry@example.org')).body).toMatchObject({ reason: 'complaint' });
    expect((await h.suppression('transactional', 'angry@example.org')).status).toBe(404);

    const unsubscribed = await h.email(optOut.id);
    expect(events(unsubscribed)).toEqual(['email.delivered', 'email.unsubscribed']);
    expect(unsubscribed.events[1].provider).toMatchObject({ reporting_mta: 'fbl.isp.example', user_agent: 'ExampleFBL/1.0', ip: '192.0.2.25' });
    expect((await h.suppression('broadcast', 'done@example.org')).body).toMatchObject({ reason: 'unsubscribe' });

    expect(events(await h.email(auth.id))).toEqual(['email.delivered']);
    expect((await h.suppression('transactional', 'auth@example.org')).status).toBe(404);

    expect((await h.reports()).map((x) => [x.kind, x.feedback_type, x.proof, x.email_id, x.outcome])).toEqual([
      ['complaint', 'abuse', 'message_id', abuse.id, 'applied'],
      ['complaint', 'opt-out', 'message_id', optOut.id, 'applied'],
      ['complaint', 'auth-failure', 'message_id', auth.id, 'no_effect'],
    ]);
  });

  it('ties a redacted complaint to its recipient through the VERP Return-Path of the quoted original', async () => {
    const h = await startInbound(kind);
    const sent = await h.delivered({ to: ['a@example.org', 'b@example.org'] });
    const b = sent.recipients[1]!;
    // No Original-Rcpt-To, no To:, no Message-ID: only our signed envelope sender proves it.
    await sendMail(h.port, 'fbl-bounces@isp.example', [FBL], arf({ feedbackType: 'abuse', returnPath: h.verp(b.id) }));
    const email = await h.email(sent.id);
    expect(email.events.filter((e: { event: string }) => e.event === 'email.complained')).toEqual([expect.objectContaining({ recipient: 'b@example.org' })]);
    expect((await h.suppression('transactional', 'b@example.org')).status).toBe(200);
    expect((await h.suppression('transactional', 'a@example.org')).status).toBe(404);
  });

  it('stores a complaint about a Message-ID that is not exactly ours, or a recipient the message never had, without effect', async () => {
    const h = await startInbound(kind);
    const sent = await h.delivered({ to: ['a@example.org', 'b@example.org'] });
    const id = sent.message.message_id_header;
    await sendMail(h.port, 'x@isp.example', [FBL], arf({ feedbackType: 'abuse', recipient: 'a@example.org', originalMessageId: id.replace('>', 'x>') }));
    await sendMail(
      h.port,
      'x@isp.example',
      [FBL],
      arf({ feedbackType: 'abuse', recipient: 'a@example.org', originalMessageId: id.toUpperCase() === id ? `<0${id.slice(1)}` : id.toUpperCase() }),
    );
    await sendMail(h.port, 'x@isp.example', [FBL], arf({ feedbackType: 'abuse', recipient: 'stranger@example.org', originalMessageId: id }));
    // Two recipients and the report names neither: which one complained is unknown.
    await sendMail(h.port, 'x@isp.example', [FBL], arf({ feedbackType: 'abuse', originalMessageId: id }));
    expect(events(await h.email(sent.id))).toEqual(['email.delivered', 'email.delivered']);
    expect((await h.reports()).map((x) => x.outcome)).toEqual(['uncorrelated', 'uncorrelated', 'no_effect', 'no_effect']);
    const metrics = await h.server.services.metrics.registry.getSingleMetricAsString('mailsvc_inbound_reports_total');
    expect(metrics).toContain('mailsvc_inbound_reports_total{kind="complaint",outcome="uncorrelated"} 2');
  });
});

describe.each(STORES)('mailto unsubscribe (%s)', (kind) => {
  it('mail to u+<token>@ fires email.unsubscribed and suppresses on the message stream; a VERP token there is refused', async () => {
    const h = await startInbound(kind);
    const sent = await h.delivered({ to: 'reader@example.org', stream: 'broadcast' });
    const recipient = sent.recipients[0]!;
    const address = `u+${h.server.services.tokens.unsubscribe.signId(recipient.id)}@${RETURN_PATH}`;
    const body = `From: Reader <reader@example.org>\nTo: ${address}\nSubject: Unsubscribe\nUser-Agent: ExampleMail/2.1\n\nThis message was automatically generated by ExampleMail.\n`;
    const r = await sendMail(h.port, 'reader@example.org', [address], body);
    expect(r.rcpt[0]!.code).toBe(250);
    expect(r.data!.code).toBe(250);

    const email = await h.email(sent.id);
    expect(email.events[1]).toStrictEqual({
      event: 'email.unsubscribed',
      occurred_at: expect.any(String),
      email_id: sent.id,
      recipient: 'reader@example.org',
      provider: {
        response: `unsubscribe request mailed to ${address} from reader@example.org`,
        reporting_mta: 'mail.mailsvc.test',
        user_agent: 'ExampleMail/2.1',
        ip: '127.0.0.1',
      },
    });
    expect((await h.suppression('broadcast', 'reader@example.org')).body).toMatchObject({ reason: 'unsubscribe' });
    expect((await h.suppression('transactional', 'reader@example.org')).status).toBe(404);

    // The VERP token of the same recipient is not an unsubscribe token.
    const verpToken = h.verp(recipient.id).slice(2);
    expect((await sendMail(h.port, 'x@example.org', [`u+${verpToken}`], body)).rcpt[0]!.code).toBe(550);
    // An out-of-office answer to the unsubscribe address unsubscribes nobody.
    await sendMail(h.port, 'kim@example.org', [address], `From: kim@example.org\nSubject: Out of Office: Unsubscribe\nAuto-Submitted: auto-replied\n\nAway.\n`);
    expect((await h.email(sent.id)).events.filter((e: { event: string }) => e.event === 'email.unsubscribed')).toHaveLength(1);
  });
});
