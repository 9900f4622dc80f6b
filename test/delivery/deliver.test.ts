import { describe, expect, it, onTestFinished } from 'vitest';
import { dkimTxtRecord } from '../../src/dkim/keys.ts';
import { verpRecipientId } from '../../src/delivery/verp.ts';
import { domainsRepo } from '../../src/store/domains.ts';
import { startSmtpSink } from '../helpers/smtp-sink.ts';
import { STORES } from '../helpers/stores.ts';
import { dkimpyPython, dkimpyVerdict, mailauthVerdict, noteWithoutDkimpy } from './dkim-check.ts';
import { deliveryEnv, FROM_DOMAIN, loopbackAlias } from './env.ts';

const header = (raw: Buffer, name: string): string | undefined => {
  const head = raw
    .toString('latin1')
    .split('\r\n\r\n')[0]!
    .replace(/\r\n[ \t]+/g, ' ');
  return new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1];
};

describe.each(STORES)('direct MX delivery (%s)', (kind) => {
  it('delivers one copy per recipient domain to its MX, DKIM-signed, each with its own VERP sender, and records email.delivered per recipient', async (ctx) => {
    await noteWithoutDkimpy(ctx);
    const env = await deliveryEnv(kind);
    const second = await startSmtpSink();
    onTestFinished(() => second.close());
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
      ['delivered', 1],
      ['delivered', 1],
      ['delivered', 1],
    ]);
    const delivered = detail.events.filter((e: { event: string }) => e.event === 'email.delivered');
    expect(delivered).toHaveLength(3);
    expect(new Set(delivered.map((e: { occurred_at: string }) => e.occurred_at)).size).toBe(3);
    const bob = delivered.find((e: { recipient: string }) => e.recipient === 'bob@two.test');
    expect(bob).toMatchObject({ email_id: id, provider: { reporting_mta: 'mx.two.test', smtp_code: 250, status: expect.any(String) } });
    expect(bob.provider.response).toMatch(/^250 /);
  });

  it('tries every MX in preference order: a refusing first MX, then the second takes it', async () => {
    const env = await deliveryEnv(kind);
    // Nothing listens on 127.0.0.3: the first MX refuses the connection.
    env.mx('dest.test', [
      { name: 'mx1.dest.test', ip: '127.0.0.3', priority: 10 },
      { name: 'mx2.dest.test', ip: '127.0.0.1', priority: 20 },
    ]);
    const id = await env.send({ to: 'user@dest.test' });
    expect(await env.worker().runOnce()).toMatchObject({ delivered: 1 });
    expect(env.sink.messages.map((m) => m.to)).toStrictEqual([['user@dest.test']]);
    const [event] = (await env.detail(id)).events;
    expect(event).toMatchObject({ event: 'email.delivered', provider: { reporting_mta: 'mx2.dest.test' } });
  });

  it('defers when every MX fails, after trying each of them', async () => {
    const env = await deliveryEnv(kind);
    env.mx('dest.test', [
      { name: 'mx1.dest.test', ip: '127.0.0.3', priority: 10 },
      { name: 'mx2.dest.test', ip: '127.0.0.1', priority: 20 },
    ]);
    env.sink.script('user@dest.test', [{ rcpt: { reply: { code: 450, message: '4.2.0 Mailbox busy' } } }]);
    const id = await env.send({ to: 'user@dest.test' });
    expect(await env.worker().runOnce()).toMatchObject({ deferred: 1 });
    const row = await env.server.services.db('recipients').where({ message_id: id }).first();
    expect(row).toMatchObject({ status: 'deferred', last_mx: 'mx2.dest.test', last_response: '450 4.2.0 Mailbox busy' });
  });

  it('bounces a null MX (RFC 7505) and a missing domain without connecting anywhere; an address record without MX is the implicit MX', async () => {
    const env = await deliveryEnv(kind);
    env.dns.set('nullmx.test', 'MX', { exchange: '', priority: 0 });
    env.dns.set('nullmx.test', 'A', '127.0.0.1');
    env.dns.set('implicit.test', 'A', '127.0.0.1');
    const id = await env.send({ to: ['a@nullmx.test', 'b@nowhere.test', 'c@implicit.test', 'd@bounces.mail.mailsvc.test'] });
    expect(await env.worker().runOnce()).toMatchObject({ claimed: 4, bounced: 3, delivered: 1 });

    expect(env.sink.connections).toHaveLength(1);
    expect(env.sink.messages.map((m) => m.to)).toStrictEqual([['c@implicit.test']]);
    const events = Object.fromEntries((await env.detail(id)).events.map((e: { recipient: string }) => [e.recipient, e]));
    expect(events['a@nullmx.test']).toMatchObject({
      event: 'email.bounced',
      bounce_type: 'permanent',
      provider: { status: '5.1.10', reporting_mta: 'mail.mailsvc.test' },
    });
    expect(events['a@nullmx.test'].provider.response).toMatch(/null MX/);
    expect(events['b@nowhere.test']).toMatchObject({ bounce_type: 'permanent', provider: { status: '5.1.2' } });
    // Our own return-path domain is never a destination, whatever its DNS says.
    expect(events['d@bounces.mail.mailsvc.test']).toMatchObject({ event: 'email.bounced', provider: { status: '5.4.6' } });
    expect(events['c@implicit.test']).toMatchObject({ event: 'email.delivered', provider: { reporting_mta: 'implicit.test' } });
  });

  it('sends everything through delivery.relayHost with AUTH when set, ignoring MX records', async () => {
    const relay = await startSmtpSink({ auth: { user: 'relay-user', pass: 'relay-secret' } });
    onTestFinished(() => relay.close());
    const env = await deliveryEnv(kind, {
      delivery: { relayHost: `127.0.0.1:${relay.port}`, relayUser: 'relay-user', relayPassword: 'relay-secret' },
    });
    env.mx('dest.test');
    const id = await env.send({ to: ['one@dest.test', 'two@elsewhere.test'] });
    expect(await env.worker().runOnce()).toMatchObject({ delivered: 2 });
    const got = await relay.waitForMessages(2);
    expect(got.map((m) => m.to[0]).sort()).toStrictEqual(['one@dest.test', 'two@elsewhere.test']);
    expect(got.every((m) => m.user === 'relay-user' && m.from.startsWith('b+'))).toBe(true);
    expect(env.sink.connections).toHaveLength(0);
    expect(env.dns.queries.filter((q) => q.type === 'MX')).toStrictEqual([]);
    const events = (await env.detail(id)).events;
    expect(events.map((e: { provider: { reporting_mta: string } }) => e.provider.reporting_mta)).toStrictEqual(['127.0.0.1', '127.0.0.1']);
  });
});
