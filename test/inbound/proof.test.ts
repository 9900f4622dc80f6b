import { describe, expect, it } from 'vitest';
import { messagesRepo } from '../../src/store/messages.ts';
import { STORES } from '../helpers/stores.ts';
import { RETURN_PATH, startInbound, type InboundHarness } from './harness.ts';
import { dsn } from './reports.ts';
import { sendMail } from './smtp-client.ts';

const FBL = `fbl@${RETURN_PATH}`;

/** A DSN naming several recipients, quoting the original's Message-ID and Return-Path. */
function multiDsn(o: { to: string; recipients: string[]; messageId: string; returnPath: string }): string {
  const blocks = o.recipients
    .map((r) => `Final-Recipient: rfc822; ${r}\nAction: failed\nStatus: 5.1.1\nDiagnostic-Code: smtp; 550 5.1.1 <${r}>: User unknown\n`)
    .join('\n');
  return `From: MAILER-DAEMON@mx.example.org
To: ${o.to}
Subject: Undelivered Mail Returned to Sender
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="B"

--B
Content-Type: text/plain

Your message could not be delivered to ${o.recipients.join(', ')}.

--B
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.org

${blocks}
--B
Content-Type: text/rfc822-headers

Return-Path: <${o.returnPath}>
From: News <news@acme.test>
To: ${o.recipients.join(', ')}
Subject: Hello
Message-ID: ${o.messageId}

--B--
`;
}

async function statuses(h: InboundHarness, id: number) {
  return Object.fromEntries((await h.email(id)).recipients.map((r: { address: string; status: string }) => [r.address, r.status]));
}

async function suppressed(h: InboundHarness, addresses: string[]) {
  const out: string[] = [];
  for (const a of addresses) if ((await h.suppression('transactional', a)).status === 200) out.push(a);
  return out;
}

describe.each(STORES)('proof per recipient (%s)', (kind) => {
  const to = ['alice@example.org', 'bob@example.org', 'carol@example.org'];

  it('a recipient of a 3-recipient message mailing fbl@ a DSN naming the other two changes nothing, queued or delivered', async () => {
    const h = await startInbound(kind);
    // Still queued: nothing was attempted, so nothing about it can have come back.
    const res = await h.server.api('POST', '/emails', { key: h.apiKey, body: { from: 'news@acme.test', to, subject: 'Hello', text: 'Hi' } });
    expect(res.status).toBe(201);
    const queued = (await messagesRepo.byId(h.server.services.db, res.body.id))!;
    const alicesOwn = h.verp((await messagesRepo.recipients(h.server.services.db, queued.id))[0]!.id);
    for (const returnPath of [FBL, alicesOwn]) {
      const r = await sendMail(h.port, 'alice@example.org', [FBL], multiDsn({ to: FBL, recipients: to.slice(1), messageId: queued.message_id_header, returnPath }));
      expect(r.data!.code).toBe(250);
    }
    expect(await statuses(h, queued.id)).toEqual({ 'alice@example.org': 'queued', 'bob@example.org': 'queued', 'carol@example.org': 'queued' });

    // Delivered: the Message-ID is ours, but every recipient (Bcc too) has seen it.
    const sent = await h.delivered({ to });
    const r = await sendMail(
      h.port,
      'alice@example.org',
      [FBL],
      multiDsn({ to: FBL, recipients: to.slice(1), messageId: sent.message.message_id_header, returnPath: FBL }),
    );
    expect(r.data!.code).toBe(250);
    // Alice quotes her own VERP sender: it pins her, and the report names only the others.
    const own = h.verp(sent.recipients[0]!.id);
    await sendMail(h.port, 'alice@example.org', [FBL], multiDsn({ to: FBL, recipients: to.slice(1), messageId: sent.message.message_id_header, returnPath: own }));
    await sendMail(h.port, 'alice@example.org', [own], multiDsn({ to: own, recipients: to.slice(1), messageId: sent.message.message_id_header, returnPath: own }));

    expect(await statuses(h, sent.id)).toEqual({ 'alice@example.org': 'delivered', 'bob@example.org': 'delivered', 'carol@example.org': 'delivered' });
    expect((await h.email(sent.id)).events.filter((e: { event: string }) => e.event === 'email.bounced')).toEqual([]);
    expect(await suppressed(h, to)).toEqual([]);
    const reports = await h.reports();
    expect(reports.map((x) => x.outcome)).toEqual(['no_effect', 'no_effect', 'no_effect', 'no_effect', 'no_effect']);
    expect(reports[0].effect).toMatch(/several recipients/);
    expect(reports[1].effect).toMatch(/alice@example\.org was never attempted \(queued\)/);
    expect(reports[2]).toMatchObject({ proof: 'message_id', email_id: sent.id, recipient_id: null });
    expect(reports[2].effect).toMatch(/several recipients/);
  });

  it('a genuine DSN with a recipient VERP token suppresses that recipient only, by envelope or by quoted Return-Path', async () => {
    const h = await startInbound(kind);
    const sent = await h.delivered({ to });
    const [, bob, carol] = sent.recipients;
    const r = await sendMail(
      h.port,
      '',
      [h.verp(bob!.id)],
      dsn({ to: h.verp(bob!.id), recipient: 'bob@example.org', originalMessageId: sent.message.message_id_header }),
    );
    expect(r.data!.code).toBe(250);
    expect(await statuses(h, sent.id)).toEqual({ 'alice@example.org': 'delivered', 'bob@example.org': 'bounced', 'carol@example.org': 'delivered' });
    expect(await suppressed(h, to)).toEqual(['bob@example.org']);

    // To fbl@, the quoted original's Return-Path carries Carol's token: Carol only.
    const c = await sendMail(
      h.port,
      '',
      [FBL],
      multiDsn({ to: FBL, recipients: ['carol@example.org', 'alice@example.org'], messageId: sent.message.message_id_header, returnPath: h.verp(carol!.id) }),
    );
    expect(c.data!.code).toBe(250);
    expect(await statuses(h, sent.id)).toEqual({ 'alice@example.org': 'delivered', 'bob@example.org': 'bounced', 'carol@example.org': 'bounced' });
    expect(await suppressed(h, to)).toEqual(['bob@example.org', 'carol@example.org']);
  });

  it('the Message-ID of a single-recipient message is proof for that recipient', async () => {
    const h = await startInbound(kind);
    const sent = await h.delivered({ to: 'solo@example.org' });
    await sendMail(h.port, '', [FBL], multiDsn({ to: FBL, recipients: ['solo@example.org'], messageId: sent.message.message_id_header, returnPath: FBL }));
    expect(await statuses(h, sent.id)).toEqual({ 'solo@example.org': 'bounced' });
    expect((await h.reports())[0]).toMatchObject({ proof: 'message_id', outcome: 'applied', recipient_id: sent.recipients[0]!.id });
  });
});
