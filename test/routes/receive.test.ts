import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { RawSmtp } from '../inbound/smtp-client.ts';
import { signatureValid, startReceiver } from '../webhooks/receiver.ts';
import { until } from '../webhooks/world.ts';
import { STORES } from '../helpers/stores.ts';
import { arcSealed, compose, dkimKey, dkimSigned, routeWorld } from './world.ts';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const run = promisify(execFile);

describe.each(STORES)('mail received for routes (%s)', (kind) => {
  it('POSTs a DKIM-signed message with the exact payload, signed over the raw body, attachments byte-exact', async () => {
    const world = await routeWorld(kind);
    const receiver = await startReceiver();
    const route = await world.route('support@acme.test', receiver.url);
    const key = dkimKey();
    world.dns.set('sel._domainkey.sender.test', 'TXT', key.record);
    world.dns.set('sender.test', 'TXT', 'v=spf1 ip4:127.0.0.1 -all');
    world.dns.set('_dmarc.sender.test', 'TXT', 'v=DMARC1; p=reject');
    const data = randomBytes(3000);
    const logo = randomBytes(500);
    const raw = await dkimSigned(
      await compose({
        from: '"Ann Sender" <ann@sender.test>',
        to: 'Support <support@acme.test>',
        cc: '"Bo" <bo@example.org>',
        replyTo: 'replies@sender.test',
        subject: 'Help with order 42 ✓',
        messageId: '<m1@sender.test>',
        inReplyTo: '<prev@acme.test>',
        references: ['<root@acme.test>', '<prev@acme.test>'],
        date: new Date('2026-01-02T03:04:05Z'),
        text: 'Where is my order?\n',
        html: '<p>Where is my <b>order</b>?</p><img src="cid:logo@sender.test">',
        attachments: [
          { filename: 'data.bin', content: data, contentType: 'application/octet-stream' },
          { filename: 'logo.png', content: logo, contentType: 'image/png', cid: 'logo@sender.test' },
        ],
      }),
      { domain: 'sender.test', selector: 'sel', privateKey: key.privateKey },
    );

    const reply = await world.send(raw, { from: 'bounce@sender.test', to: ['SUPPORT@acme.test'] });
    expect(reply).toMatch(/^250 2\.0\.0 Ok: received as \d+$/);
    const [req] = await receiver.waitFor(1);
    expect(signatureValid(req!, route.secret)).toBe(true);
    expect(req!.headers['webhook-id']).toMatch(/^rcv_\d+$/);
    const body = JSON.parse(req!.raw.toString('utf8'));
    const id = Number(/received as (\d+)/.exec(reply)![1]);
    expect(Object.keys(body)).toStrictEqual([
      'event',
      'id',
      'received_at',
      'route_id',
      'envelope',
      'from',
      'to',
      'cc',
      'reply_to',
      'subject',
      'message_id',
      'in_reply_to',
      'references',
      'date',
      'text',
      'html',
      'headers',
      'attachments',
      'auth',
      'spam',
    ]);
    expect({ ...body, headers: undefined, received_at: undefined }).toStrictEqual({
      event: 'email.received',
      id,
      received_at: undefined,
      route_id: route.id,
      envelope: { from: 'bounce@sender.test', to: ['support@acme.test'] },
      from: { name: 'Ann Sender', address: 'ann@sender.test' },
      to: [{ name: 'Support', address: 'support@acme.test' }],
      cc: [{ name: 'Bo', address: 'bo@example.org' }],
      reply_to: [{ name: '', address: 'replies@sender.test' }],
      subject: 'Help with order 42 ✓',
      message_id: '<m1@sender.test>',
      in_reply_to: '<prev@acme.test>',
      references: ['<root@acme.test>', '<prev@acme.test>'],
      date: '2026-01-02T03:04:05.000Z',
      text: 'Where is my order?\n',
      html: '<p>Where is my <b>order</b>?</p><img src="cid:logo@sender.test">',
      headers: undefined,
      // The inline image sits in the multipart/related part nodemailer builds first.
      attachments: [
        { filename: 'logo.png', content_type: 'image/png', size: 500, content_id: 'logo@sender.test', content: logo.toString('base64') },
        { filename: 'data.bin', content_type: 'application/octet-stream', size: 3000, content: data.toString('base64') },
      ],
      auth: { spf: 'pass', dkim: 'pass', dmarc: 'pass', arc: 'none' },
      spam: null,
    });
    expect(body.received_at).toMatch(ISO);
    expect(body.headers[0]![0]).toBe('DKIM-Signature');
    expect(body.headers.map((h: [string, string]) => h[0])).toEqual(expect.arrayContaining(['From', 'To', 'Cc', 'Reply-To', 'Subject', 'Message-ID', 'Date']));
    expect(body.headers.find((h: [string, string]) => h[0] === 'References')).toStrictEqual(['References', '<root@acme.test> <prev@acme.test>']);

    // The API: the message, its raw bytes exactly as received, its attachments by URL.
    const shown = await world.server.api('GET', `/inbound/${id}`, { key: world.apiKey });
    expect(shown.body).toMatchObject({ id, subject: 'Help with order 42 ✓', auth: body.auth, envelope: body.envelope });
    expect(shown.body.attachments[0].url).toBe(`${world.server.config.tracking.baseUrl}/api/v1/inbound/${id}/attachments/0`);
    const rawBack = await fetch(`${world.server.url}/api/v1/inbound/${id}/raw`, { headers: { authorization: `Bearer ${world.apiKey}` } });
    expect(rawBack.headers.get('content-type')).toBe('message/rfc822');
    // What arrived is what nodemailer sent, dot-unstuffed, with CRLF line ends.
    expect(
      Buffer.from(await rawBack.arrayBuffer())
        .toString('latin1')
        .replace(/\r\n/g, '\n'),
    ).toBe(raw.toString('latin1').replace(/\r\n/g, '\n'));
    const second = await fetch(`${world.server.url}/api/v1/inbound/${id}/attachments/1`, { headers: { authorization: `Bearer ${world.apiKey}` } });
    expect([second.status, second.headers.get('content-type'), second.headers.get('content-disposition')]).toStrictEqual([
      200,
      'application/octet-stream',
      'attachment; filename="data.bin"',
    ]);
    expect(Buffer.from(await second.arrayBuffer()).equals(data)).toBe(true);
    expect((await world.server.api('GET', `/inbound/${id}/attachments/2`, { key: world.apiKey })).status).toBe(404);
    const list = await world.server.api('GET', '/inbound', { key: world.apiKey });
    expect(list.body.data).toMatchObject([{ id, from: { address: 'ann@sender.test' }, subject: 'Help with order 42 ✓', envelope: body.envelope }]);
    const other = await world.server.workspace();
    expect((await world.server.api('GET', `/inbound/${id}`, { key: other.apiKey })).status).toBe(404);
    expect((await world.server.api('GET', `/inbound/${id}/raw`, { key: other.apiKey })).status).toBe(404);

    const log = await until(async () => {
      const res = await world.server.api('GET', `/routes/${route.id}/deliveries`, { key: world.apiKey });
      return res.body.data.length === 1 && res.body.data;
    }, 'the attempt logged');
    expect(log).toMatchObject([{ inbound_id: id, attempt: 1, response_code: 200, error: null }]);
  });

  it('names forged, unsigned and ARC-sealed mail as such, and gives attachments by URL over inbound.inlineAttachmentBytes', async () => {
    const world = await routeWorld(kind, { inbound: { inlineAttachmentBytes: 2000 } });
    const receiver = await startReceiver();
    await world.route('*@acme.test', receiver.url);
    // bank.test publishes SPF and DMARC p=reject, and a key the forger does not hold.
    world.dns.set('bank.test', 'TXT', 'v=spf1 ip4:192.0.2.1 -all');
    world.dns.set('_dmarc.bank.test', 'TXT', 'v=DMARC1; p=reject');
    world.dns.set('k1._domainkey.bank.test', 'TXT', dkimKey().record);
    const forged = await dkimSigned(await compose({ from: 'ceo@bank.test', to: 'pay@acme.test', subject: 'Wire now', text: 'now' }), {
      domain: 'bank.test',
      selector: 'k1',
      privateKey: dkimKey().privateKey,
    });
    await world.send(forged, { from: 'ceo@bank.test', to: ['pay@acme.test'] });
    const data = randomBytes(4000);
    await world.send(await compose({ from: 'x@plain.test', to: 'hello@acme.test', subject: 'plain', text: 'hi', attachments: [{ filename: 'a.bin', content: data }] }), {
      from: 'x@plain.test',
      to: ['hello@acme.test'],
    });
    // A list that forwarded a message sealed it (ARC) and signed it with its own DKIM key; its
    // forwarding address fails the original sender's SPF, and the chain says what it saw.
    const arcKey = dkimKey();
    world.dns.set('arc._domainkey.list.test', 'TXT', arcKey.record);
    world.dns.set('list.test', 'TXT', 'v=spf1 ip4:127.0.0.1 -all');
    const forwarded = await arcSealed(await compose({ from: 'member@plain.test', to: 'list@acme.test', subject: 'via the list', text: 'fwd' }), {
      domain: 'list.test',
      selector: 'arc',
      privateKey: arcKey.privateKey,
      authResults: 'list.test; spf=pass smtp.mailfrom=member@plain.test',
    });
    await world.send(forwarded, { from: 'bounces@list.test', to: ['list@acme.test'] });
    const [first, second, third] = (await receiver.waitFor(3)).map((r) => JSON.parse(r.raw.toString('utf8')));
    expect(first.auth).toStrictEqual({ spf: 'fail', dkim: 'fail', dmarc: 'fail', arc: 'none' });
    expect(second.auth).toStrictEqual({ spf: 'none', dkim: 'none', dmarc: 'none', arc: 'none' });
    expect(third.auth).toStrictEqual({ spf: 'pass', dkim: 'none', dmarc: 'none', arc: 'pass' });
    expect(second.attachments).toStrictEqual([
      {
        filename: 'a.bin',
        content_type: 'application/octet-stream',
        size: 4000,
        url: `${world.server.config.tracking.baseUrl}/api/v1/inbound/${second.id}/attachments/0`,
      },
    ]);
    const got = await fetch(`${world.server.url}/api/v1/inbound/${second.id}/attachments/0`, { headers: { authorization: `Bearer ${world.apiKey}` } });
    expect(Buffer.from(await got.arrayBuffer()).equals(data)).toBe(true);
  });

  it('refuses at RCPT a receiving domain’s recipient no route matches, and relaying, and still takes reports', async () => {
    const world = await routeWorld(kind);
    const receiver = await startReceiver();
    await world.route('support@acme.test', receiver.url);
    const smtp = await RawSmtp.connect(world.port);
    expect((await smtp.command('EHLO client.test')).code).toBe(250);
    expect((await smtp.command('MAIL FROM:<a@plain.test>')).code).toBe(250);
    expect(await smtp.command('RCPT TO:<nobody@acme.test>')).toStrictEqual({ code: 550, text: '5.1.1 No such recipient here' });
    expect(await smtp.command('RCPT TO:<someone@elsewhere.example>')).toMatchObject({ code: 550, text: expect.stringMatching(/^5\.7\.1 Relaying denied/) });
    expect(await smtp.command('RCPT TO:<support%elsewhere.example@acme.test>')).toMatchObject({ code: 550, text: expect.stringMatching(/^5\.7\.1 Source routing/) });
    expect((await smtp.command('RCPT TO:<support@acme.test>')).code).toBe(250);
    expect((await smtp.command('RCPT TO:<postmaster@bounces.mailsvc.test>')).code).toBe(250);
    expect((await smtp.command('DATA')).code).toBe(354);
    const done = await smtp.command('From: a@plain.test\r\nTo: support@acme.test\r\nSubject: both\r\n\r\nhello\r\n.');
    expect(done.code).toBe(250);
    expect(done.text).toMatch(/^2\.0\.0 Ok: report \d+ stored; received as \d+$/);
    await receiver.waitFor(1);
    await smtp.command('QUIT');
  });

  it('takes mail from swaks too', async () => {
    const world = await routeWorld(kind);
    const receiver = await startReceiver();
    await world.route('*+tickets@acme.test', receiver.url);
    const { stdout } = await run('swaks', [
      '--server',
      `127.0.0.1:${world.port}`,
      '--from',
      'client@plain.test',
      '--to',
      'help+tickets@acme.test',
      '--header',
      'Subject: from swaks',
      '--body',
      'ticket body',
      '--helo',
      'client.test',
    ]);
    expect(stdout).toMatch(/<- {2}250 2\.0\.0 Ok: received as \d+/);
    const [req] = await receiver.waitFor(1);
    const body = JSON.parse(req!.raw.toString('utf8'));
    expect([body.envelope, body.subject]).toStrictEqual([{ from: 'client@plain.test', to: ['help+tickets@acme.test'] }, 'from swaks']);
    expect(body.text).toMatch(/^ticket body\n/);
  });
});
