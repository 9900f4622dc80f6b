import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { simpleParser } from 'mailparser';
import MailComposer from 'nodemailer/lib/mail-composer';
import { describe, expect, it } from 'vitest';
import { dkimTxtRecord } from '../../src/dkim/keys.ts';
import { domainsRepo } from '../../src/store/domains.ts';
import { dkimpyPython, dkimpyVerdict, mailauthVerdict, noteWithoutDkimpy } from '../delivery/dkim-check.ts';
import { FROM_DOMAIN } from '../delivery/env.ts';
import { STORES } from '../helpers/stores.ts';
import { queuedId, submissionEnv } from './env.ts';

/** Debian's swaks, when installed: a second, independent client. */
const swaks = spawnSync('swaks', ['--version'], { stdio: 'ignore' }).status === 0;
const SUBJECT = 'Grüße aus Köln – 東京 ✓';
const headerBlock = (raw: Buffer) => raw.toString('latin1').split('\r\n\r\n')[0]!;
const bodyOf = (raw: Buffer) => raw.subarray(raw.indexOf('\r\n\r\n') + 4);

function composed(options: ConstructorParameters<typeof MailComposer>[0]): Promise<Buffer> {
  return new Promise((resolve, reject) => new MailComposer(options).compile().build((err, raw) => (err ? reject(err) : resolve(raw))));
}

describe.each(STORES)('SMTP submission (%s)', (kind) => {
  it('takes a message with an attachment and a non-ASCII subject over STARTTLS and implicit TLS; it reaches the MX signed, body bytes unchanged, without Bcc', async (ctx) => {
    await noteWithoutDkimpy(ctx);
    const env = await submissionEnv(kind);
    env.mx('dest.test');
    const attachment = randomBytes(3000);
    const raw = await composed({
      from: `Acme Shop <shop@${FROM_DOMAIN}>`,
      to: 'Alice <alice@dest.test>',
      bcc: 'hidden@dest.test',
      subject: SUBJECT,
      text: 'Your order ships today.\nDanke schön!',
      html: '<p>Your order ships <b>today</b>.</p>',
      attachments: [{ filename: 'invoice.bin', content: attachment }],
    });
    const envelope = { from: `shop@${FROM_DOMAIN}`, to: ['alice@dest.test', 'hidden@dest.test'] };

    const starttls = await env.client().sendMail({ envelope, raw });
    const implicit = await env.client({ port: env.ports.submissions, secure: true, requireTLS: false }).sendMail({ envelope, raw });
    const ids = [queuedId(starttls.response), queuedId(implicit.response)];
    expect(ids[0]).not.toBe(ids[1]);

    for (const id of ids) {
      const detail = await env.detail(id);
      expect(detail).toMatchObject({
        id,
        subject: SUBJECT,
        from: `Acme Shop <shop@${FROM_DOMAIN}>`,
        to: ['Alice <alice@dest.test>'],
        cc: [],
        bcc: ['hidden@dest.test'],
        stream: 'transactional',
      });
      expect(detail.recipients.map((r: { address: string }) => r.address).sort()).toStrictEqual(['alice@dest.test', 'hidden@dest.test']);
    }

    expect(await env.worker().runOnce()).toMatchObject({ delivered: 4 });
    const delivered = await env.sink.waitForMessages(4);
    const domain = (await domainsRepo.byName(env.server.services.db, FROM_DOMAIN))!;
    for (const m of delivered) {
      expect(headerBlock(m.raw)).not.toMatch(/^bcc:/im);
      expect(headerBlock(m.raw)).toMatch(/^DKIM-Signature:/m);
      // Line endings normalised to CRLF (MailComposer leaves the text's bare LF), and the final
      // CRLF the DATA terminator needs; otherwise the bytes as composed.
      expect(bodyOf(m.raw).toString('latin1')).toBe(
        bodyOf(raw)
          .toString('latin1')
          .replace(/\r?\n/g, '\r\n')
          .replace(/(?<!\r\n)$/, '\r\n'),
      );
      expect(await mailauthVerdict(m.raw, env.dns.address)).toStrictEqual(['pass']);
      if (dkimpyPython) expect(dkimpyVerdict(m.raw, `${domain.selector}._domainkey.${FROM_DOMAIN}`, dkimTxtRecord(domain.dkim_public_key))).toBe('pass');
      const parsed = await simpleParser(m.raw);
      expect(parsed.subject).toBe(SUBJECT);
      expect(parsed.attachments[0]!.content.equals(attachment)).toBe(true);
    }
    expect(delivered.map((m) => m.to[0]).sort()).toStrictEqual(['alice@dest.test', 'alice@dest.test', 'hidden@dest.test', 'hidden@dest.test']);
    for (const id of ids) expect((await env.detail(id)).status).toBe('delivered');
  });

  it('adds Date and Message-ID when missing, removes Return-Path and X-Mailsvc-*, and normalises bare LF line endings', async () => {
    const env = await submissionEnv(kind);
    env.mx('dest.test');
    const raw = Buffer.from(
      [
        `From: shop@${FROM_DOMAIN}`,
        'To: bob@dest.test',
        'Return-Path: <evil@elsewhere.test>',
        'X-Mailsvc-Note: internal',
        'X-Custom: kept',
        'Subject: plain',
        '',
        'line one',
        'line two',
        '',
      ].join('\n'),
    );
    const info = await env.client().sendMail({ envelope: { from: `shop@${FROM_DOMAIN}`, to: ['bob@dest.test'] }, raw });
    const id = queuedId(info.response);
    await env.worker().runOnce();
    const [m] = await env.sink.waitForMessages(1);
    const head = headerBlock(m!.raw);
    expect(head).toMatch(/^Date: \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000$/m);
    expect(head).toMatch(/^X-Custom: kept$/m);
    expect(head).not.toMatch(/^(return-path|x-mailsvc-note):/im);
    const messageId = /^Message-ID: (<[^>]+>)$/m.exec(head)?.[1];
    expect(messageId).toBe((await env.detail(id)).message_id);
    expect(bodyOf(m!.raw).toString()).toBe('line one\r\nline two\r\n');
  });

  it('swaks submits over STARTTLS and over implicit TLS with AUTH LOGIN and PLAIN', async (ctx) => {
    ctx.skip(!swaks, 'swaks is not installed');
    const env = await submissionEnv(kind);
    const run = (args: string[]) =>
      promisify(execFile)(
        'swaks',
        [
          '--server',
          '127.0.0.1',
          '--auth-user',
          'app',
          '--auth-password',
          env.ws.apiKey,
          '--from',
          `shop@${FROM_DOMAIN}`,
          '--to',
          'a@dest.test',
          '--header',
          'Subject: via swaks',
          '--body',
          'hello',
          ...args,
        ],
        { timeout: 60_000 },
      );
    const starttls = await run(['--port', String(env.ports.submission), '--tls', '--auth', 'LOGIN']);
    const implicit = await run(['--port', String(env.ports.submissions), '--tls-on-connect', '--auth', 'PLAIN']);
    for (const { stdout } of [starttls, implicit]) {
      const id = Number(/<~ {1,2}250 2\.0\.0 Ok: queued as (\d+)/.exec(stdout)?.[1]);
      expect((await env.detail(id)).subject).toBe('via swaks');
    }
  });
});
