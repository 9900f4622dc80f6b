import { describe, expect, it } from 'vitest';
import { dkimTxtRecord } from '../../src/dkim/keys.ts';
import { verpRecipientId } from '../../src/delivery/verp.ts';
import { domainsRepo } from '../../src/store/domains.ts';
import { startSmtpSink } from '../helpers/smtp-sink.ts';
import { STORES } from '../helpers/stores.ts';
import { dkimpyPython, dkimpyVerdict, mailauthVerdict } from './dkim-check.ts';
import { deliveryEnv, FROM_DOMAIN, loopbackAlias } from './env.ts';

const header = (raw: Buffer, name: string): string | undefined => {
  const head = raw.toString('latin1').split('\r\n\r\n')[0]!.replace(/\r\n[ \t]+/g, ' ');
  return new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1];
};

describe.each(STORES)('direct MX delivery (%s)', (kind) => {
  it('delivers one copy per recipient domain to its MX, DKIM-signed, each with its own VERP sender, and records email.delivered per recipient', async () => {
    const env = await deliveryEnv(kind);
    const second = await startSmtpSink();
    await loopbackAlias('127.0.0.2', env.port, second);
    env.mx('one.test');
    env.mx('two.test', [{ name: 'mx.two.test', ip: '127.0.0.2' }]);

    const id = await env.send({ to: 'Alice <alice@one.test>', cc: 'bob@two.test', bcc: 'carol@one.test', html: '<p>Hi</p>' });
    const pass = await env.worker().runOnce();
    expect(pass).toMatchObject({ claimed: 3, delivered: 3 });

    const first = await env.sink.waitForMessages(2);
    const atTwo = await second.waitForMessages(1);
    expect(first.map((m) => m.to).sort()).toStrictEqual([['alice@one.test'], ['carol@one.test']]);
    expect(atTwo.map((m) => m.to)).toStrictEqual([['bob@two.test']]);

    const detail = await env.detail(id);
    const recipientIds = new Map<string, number>();
    const rows = await env.server.services.db('recipients').where({ message_id: id }).select('id', 'address');
    for (const r of rows) recipientIds.set(r.address, r.id);
    const domain = (await domainsRepo.byName(env.server.services.db, FROM_DOMAIN))!;
    const dkimName = `${domain.selector}._domainkey.${FROM_DOMAIN}`;

    for (const m of [...first, ...atTwo]) {
      // b+<token>@<global return-path domain> (the domain's own return path is not verified here).
      expect(m.from).toMatch(/^b\+[a-z2-7]+@bounces\.mail\.mailsvc\.test$/);
      expect(m.from.split('@')[0]!.length).toBeLessThanOrEqual(64);
      expect(verpRecipientId(env.server.services.tokens.verp, m.from)).toBe(BigInt(recipientIds.get(m.to[0]!)!));
      expect(header(m.raw, 'Message-ID')).toBe(detail.message_id);
      expect(header(m.raw, 'Feedback-ID')).toMatch(/^transactional:\d+:mail\.mailsvc\.test$/);
      expect(header(m.raw, 'To')).toBe('Alice <alice@one.test>');
      expect(header(m.raw, 'Bcc')).toBeUndefined();
      expect(header(m.raw, 'DKIM-Signature')).toMatch(/c=relaxed\/relaxed/);
      expect(await mailauthVerdict(m.raw, env.dns.address)).toStrictEqual(['pass']);
      if (dkimpyPython) expect(dkimpyVerdict(m.raw, dkimName, dkimTxtRecord(domain.dkim_public_key))).toBe('pass');
    }
    expect(new Set([...first, ...atTwo].map((m) => m.from)).size).toBe(3);

    expect(detail.status).toBe('delivered');
    expect(detail.recipients.map((r: { status: string; attempts: number }) => [r.status, r.attempts])).toStrictEqual([
      ['delivered', 1], ['delivered', 1], ['delivered', 1],
    ]);
    const delivered = detail.events.filter((e: { event: string }) => e.event === 'email.delivered');
    expect(delivered).toHaveLength(3);
    expect(new Set(delivered.map((e: { occurred_at: string }) => e.occurred_at)).size).toBe(3);
    const bob = delivered.find((e: { recipient: string }) => e.recipient === 'bob@two.test');
    expect(bob).toMatchObject({ email_id: id, provider: { reporting_mta: 'mx.two.test', smtp_code: 250, status: expect.any(String) } });
    expect(bob.provider.response).toMatch(/^250 /);
  });
});
