import { describe, expect, it } from 'vitest';
import { FROM_DOMAIN } from '../delivery/env.ts';
import { ManualClock } from '../helpers/clock.ts';
import { STORES } from '../helpers/stores.ts';
import { RawSmtp } from '../inbound/smtp-client.ts';
import { queuedId, refusal, submissionEnv, type SubmissionEnv } from './env.ts';

const plain = (headers: string[], body = 'Hello') => Buffer.from([...headers, '', body, ''].join('\r\n'));
const from = `shop@${FROM_DOMAIN}`;
const countMessages = async (env: SubmissionEnv) => Number((await env.server.services.db('messages').count({ n: '*' }))[0]!.n);

async function authenticated(env: SubmissionEnv, key = env.ws.apiKey): Promise<RawSmtp> {
  const smtp = await RawSmtp.connect(env.ports.submission);
  await smtp.command('EHLO client.test');
  const auth = await smtp.command(`AUTH PLAIN ${Buffer.from(`\0app\0${key}`).toString('base64')}`);
  expect(auth.code).toBe(235);
  return smtp;
}

describe.each(STORES)('SMTP submission refusals (%s)', (kind) => {
  it('answers a wrong key with 535 5.7.8 and, past ten failures from one address, 454 4.7.0 even for the right key', async () => {
    const env = await submissionEnv(kind);
    const wrong = await refusal(env.client({ auth: { user: 'app', pass: 'mk_wrongwrongwrongwrongwrongwrongwron' } }).verify());
    expect(wrong).toMatchObject({ code: 535 });
    expect(wrong.response).toMatch(/^535 5\.7\.8 /);
    const smtp = await RawSmtp.connect(env.ports.submission);
    await smtp.command('EHLO client.test');
    for (let i = 0; i < 9; i++) expect((await smtp.command(`AUTH PLAIN ${Buffer.from('\0app\0not-a-key').toString('base64')}`)).code).toBe(535);
    const blocked = await smtp.command(`AUTH PLAIN ${Buffer.from(`\0app\0${env.ws.apiKey}`).toString('base64')}`);
    expect(blocked).toMatchObject({ code: 454 });
    expect(blocked.text).toMatch(/^4\.7\.0 Too many failed authentication attempts/);
    await smtp.quit();
  });

  it('does not offer AUTH before STARTTLS when the loopback exemption is off, so a client that skips TLS sends no key and is refused; after STARTTLS it is taken', async () => {
    const env = await submissionEnv(kind, { submission: { loopbackInsecureAuth: false } });
    const clear = await refusal(
      env.client({ requireTLS: false, ignoreTLS: true }).sendMail({ envelope: { from, to: ['a@dest.test'] }, raw: plain([`From: ${from}`, 'Subject: s']) }),
    );
    expect(clear.code).toBe(530);
    expect(await env.client().verify()).toBe(true);
  });

  it('lets a loopback client authenticate without TLS by default', async () => {
    const env = await submissionEnv(kind);
    const info = await env
      .client({ requireTLS: false, ignoreTLS: true })
      .sendMail({ envelope: { from, to: ['a@dest.test'] }, raw: plain([`From: ${from}`, 'To: a@dest.test', 'Subject: s']) });
    expect(queuedId(info.response)).toBeGreaterThan(0);
  });

  it('refuses a sender or From domain not verified for the key with 550 5.7.1 naming it; nothing is queued', async () => {
    const env = await submissionEnv(kind);
    await env.server.services.domains.add(env.ws.id, 'pending.test');
    const atMail = await refusal(
      env.client().sendMail({ envelope: { from: 'x@pending.test', to: ['a@dest.test'] }, raw: plain(['From: x@pending.test', 'Subject: s']) }),
    );
    expect(atMail.code).toBe(550);
    expect(atMail.response).toMatch(/^550 5\.7\.1 .*pending\.test.*not verified/);
    const atData = await refusal(env.client().sendMail({ envelope: { from, to: ['a@dest.test'] }, raw: plain(['From: Someone <x@stranger.test>', 'Subject: s']) }));
    expect(atData.code).toBe(550);
    expect(atData.response).toMatch(/^550 5\.7\.1 From domain stranger\.test not allowed/);
    expect(await countMessages(env)).toBe(0);
  });

  it('X-Mailsvc-Stream: broadcast to an address suppressed on broadcast is suppressed, not delivered; the header is never sent on', async () => {
    const env = await submissionEnv(kind);
    env.mx('dest.test');
    const added = await env.server.api('POST', '/suppressions', { key: env.ws.apiKey, body: { address: 'gone@dest.test', stream: 'broadcast' } });
    expect(added.status).toBe(201);
    const info = await env.client().sendMail({
      envelope: { from, to: ['gone@dest.test', 'here@dest.test'] },
      raw: plain([`From: ${from}`, 'To: gone@dest.test, here@dest.test', 'Subject: news', 'X-Mailsvc-Stream: broadcast']),
    });
    const id = queuedId(info.response);
    const detail = await env.detail(id);
    expect(detail.stream).toBe('broadcast');
    expect(Object.fromEntries(detail.recipients.map((r: { address: string; status: string }) => [r.address, r.status]))).toStrictEqual({
      'gone@dest.test': 'suppressed',
      'here@dest.test': 'queued',
    });
    expect(await env.worker().runOnce()).toMatchObject({ delivered: 1 });
    const [m] = await env.sink.waitForMessages(1);
    expect(m!.to).toStrictEqual(['here@dest.test']);
    expect(m!.raw.toString('latin1')).not.toMatch(/x-mailsvc/i);
  });

  it('the same X-Mailsvc-Idempotency-Key twice, with a new Date and Message-ID each time, is one message with one id', async () => {
    const env = await submissionEnv(kind);
    const send = (n: number) =>
      env.client().sendMail({
        envelope: { from, to: ['a@dest.test'] },
        raw: plain([
          `From: ${from}`,
          'Subject: once',
          `Date: Mon, 23 Nov 2026 10:0${n}:00 +0000`,
          `Message-ID: <try-${n}@${FROM_DOMAIN}>`,
          'X-Mailsvc-Idempotency-Key: order-4711',
        ]),
      });
    const first = queuedId((await send(1)).response);
    const second = queuedId((await send(2)).response);
    expect(second).toBe(first);
    expect(await countMessages(env)).toBe(1);
  });

  it('X-Mailsvc-Tag and X-Mailsvc-Metadata-* give the message its tags and metadata, under the API rules, and are never sent on', async () => {
    const env = await submissionEnv(kind);
    env.mx('dest.test');
    const info = await env.client().sendMail({
      envelope: { from, to: ['a@dest.test'] },
      raw: plain([`From: ${from}`, 'Subject: tagged', 'X-Mailsvc-Tag: campaign=fall', 'X-Mailsvc-Tag: kind = welcome', 'X-Mailsvc-Metadata-Order_Id: A-1001']),
    });
    const detail = await env.detail(queuedId(info.response));
    expect(detail.tags).toStrictEqual([
      { name: 'campaign', value: 'fall' },
      { name: 'kind', value: 'welcome' },
    ]);
    expect(detail.metadata).toStrictEqual({ Order_Id: 'A-1001' });
    expect(await env.worker().runOnce()).toMatchObject({ delivered: 1 });
    const [m] = await env.sink.waitForMessages(1);
    expect(m!.raw.toString('latin1')).not.toMatch(/x-mailsvc/i);

    for (const [header, reply] of [
      ['X-Mailsvc-Tag: no-equals-sign', /^550 5\.6\.0 .*X-Mailsvc-Tag must be name=value/],
      ['X-Mailsvc-Tag: bad name=x', /^550 5\.6\.0 .*X-Mailsvc-Tag: `tags\[0\]`\.name must be 1-64 letters, digits, _ or -/],
      ['X-Mailsvc-Metadata-k: ' + 'v'.repeat(257), /^550 5\.6\.0 .*X-Mailsvc-Metadata: `metadata\.k` is longer than 256 characters/],
    ] as const) {
      const refused = await refusal(env.client().sendMail({ envelope: { from, to: ['a@dest.test'] }, raw: plain([`From: ${from}`, 'Subject: s', header]) }));
      expect(refused.response).toMatch(reply);
    }
    expect(await countMessages(env)).toBe(1);
  });

  it('the 61st message in a minute gets 451 4.7.1; the 101st RCPT gets 452 4.5.3', async () => {
    const clock = new ManualClock(Date.now());
    const env = await submissionEnv(kind, { clock });
    await env.server.services.tenancy.setLimits((await env.server.services.tenancy.listWorkspaces())[0]!.name, { perMinute: 60, perHour: 1000 });
    const client = env.client({ pool: true, maxConnections: 1, maxMessages: Infinity });
    const recipients = Array.from({ length: 101 }, (_, i) => `r${i}@dest.test`);
    const wide = await client.sendMail({ envelope: { from, to: recipients }, raw: plain([`From: ${from}`, 'Subject: wide']) });
    expect(wide.rejected).toStrictEqual(['r100@dest.test']);
    expect((wide.rejectedErrors?.[0] as { response?: string }).response).toMatch(/^452 4\.5\.3 /);
    for (let i = 2; i <= 60; i++) {
      await client.sendMail({ envelope: { from, to: ['a@dest.test'] }, raw: plain([`From: ${from}`, `Subject: ${i}`]) });
    }
    const limited = await refusal(client.sendMail({ envelope: { from, to: ['a@dest.test'] }, raw: plain([`From: ${from}`, 'Subject: 61']) }));
    expect(limited.code).toBe(451);
    expect(limited.response).toMatch(/^451 4\.7\.1 Rate limit exceeded: 60 messages per minute/);
    expect(await countMessages(env)).toBe(60);
    clock.advance(61_000);
    // The key's requests over HTTP count in the same limit: read after the minute has passed.
    expect((await env.detail(queuedId(wide.response))).recipients).toHaveLength(100);
    expect(queuedId((await client.sendMail({ envelope: { from, to: ['a@dest.test'] }, raw: plain([`From: ${from}`, 'Subject: later']) })).response)).toBeGreaterThan(0);
  });

  it('a message over submission.maxSize gets 552 5.3.4, whether its size is declared or only seen in DATA; nothing is stored', async () => {
    const env = await submissionEnv(kind, { submission: { maxSize: 4096 } });
    const big = plain([`From: ${from}`, 'Subject: big'], 'x'.repeat(70).concat('\r\n').repeat(80));
    const viaClient = await refusal(env.client().sendMail({ envelope: { from, to: ['a@dest.test'] }, raw: big }));
    expect(viaClient.code).toBe(552);
    expect(viaClient.response).toMatch(/^552 5\.3\.4 /);

    const smtp = await authenticated(env);
    expect((await smtp.command(`MAIL FROM:<${from}> SIZE=5000`)).text).toMatch(/^5\.3\.4 /);
    expect((await smtp.command(`MAIL FROM:<${from}>`)).code).toBe(250);
    expect((await smtp.command('RCPT TO:<a@dest.test>')).code).toBe(250);
    const reply = await smtp.data(big);
    expect(reply.code).toBe(552);
    expect(reply.text).toMatch(/^5\.3\.4 Message too big: \d+ bytes, at most 4096/);
    // The session goes on: a message within the limit is taken.
    expect((await smtp.command(`MAIL FROM:<${from}>`)).code).toBe(250);
    expect((await smtp.command('RCPT TO:<a@dest.test>')).code).toBe(250);
    expect((await smtp.data(plain([`From: ${from}`, 'Subject: small']))).text).toMatch(/^2\.0\.0 Ok: queued as \d+$/);
    await smtp.quit();
    expect(await countMessages(env)).toBe(1);
  });
});
