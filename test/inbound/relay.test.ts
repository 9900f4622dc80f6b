import { describe, expect, it } from 'vitest';
import { domainsRepo } from '../../src/store/domains.ts';
import { STORES } from '../helpers/stores.ts';
import { RETURN_PATH, startInbound } from './harness.ts';
import { dsn } from './reports.ts';
import { RawSmtp } from './smtp-client.ts';

describe.each(STORES)('inbound relay refusal (%s)', (kind) => {
  it('refuses every open-relay probe with 5xx at RCPT and queues nothing', async () => {
    const h = await startInbound(kind);
    const sent = await h.delivered();
    const token = h.verp(sent.recipients[0]!.id).split('@')[0]!;
    const probes = [
      'victim@example.net',
      `victim%example.net@${RETURN_PATH}`,
      `example.net!victim@${RETURN_PATH}`,
      `"victim@example.net"@${RETURN_PATH}`,
      `"fbl"@${RETURN_PATH}`,
      `@${RETURN_PATH}:victim@example.net`,
      'postmaster@mail.mailsvc.test',
      'fbl@mail.mailsvc.test',
      'victim@mail.mailsvc.test',
      `${token}@example.net`,
      `fbl@${RETURN_PATH}.example.net`,
      `fbl@sub.${RETURN_PATH}`,
      'victim@[127.0.0.1]',
      'postmaster',
      `someone@${RETURN_PATH}`,
      // bounces.<d> of a domain whose return-path record never verified is not ours.
      'fbl@bounces.acme.test',
    ];
    const c = await RawSmtp.connect(h.port);
    expect((await c.command('EHLO probe.example.net')).code).toBe(250);
    expect((await c.command('MAIL FROM:<spammer@example.net>')).code).toBe(250);
    for (const address of probes) {
      const reply = await c.command(`RCPT TO:<${address}>`);
      expect({ address, code: Math.floor(reply.code / 100) }).toEqual({ address, code: 5 });
    }
    // Nothing was accepted, so there is no transaction to send data in.
    const data = await c.command('DATA');
    expect(data.code).toBeGreaterThanOrEqual(500);
    await c.quit();

    expect(await h.reports()).toEqual([]);
    const messages = await h.server.services.db('messages').count({ n: '*' }).first();
    expect(Number(messages!.n)).toBe(1);
    const refusals = await h.server.services.metrics.registry.getSingleMetricAsString('mailsvc_inbound_refusals_total');
    expect(refusals).toMatch(/reason="relayDenied"} \d+/);
    expect(refusals).toMatch(/reason="routingRefused"} \d+/);
  });

  it('takes reports for bounces.<domain> once the domain return-path record verified', async () => {
    const h = await startInbound(kind);
    const domain = (await domainsRepo.byName(h.server.services.db, 'acme.test'))!;
    await domainsRepo.update(h.server.services.db, domain.id, { return_path_verified: true });
    const sent = await h.delivered();
    const address = `${h.verp(sent.recipients[0]!.id).split('@')[0]}@bounces.acme.test`;
    const c = await RawSmtp.connect(h.port);
    await c.command('EHLO mx.example.org');
    await c.command('MAIL FROM:<>');
    expect((await c.command(`RCPT TO:<${address}>`)).code).toBe(250);
    expect((await c.command('RCPT TO:<FBL@Bounces.Acme.Test>')).code).toBe(250);
    expect((await c.data(dsn({ to: address, recipient: 'user@example.org' }))).code).toBe(250);
    await c.quit();
    // One stored copy per accepted RCPT; the report acts once.
    expect((await h.reports()).map((r) => [r.rcpt, r.outcome])).toEqual([
      [address, 'applied'],
      ['fbl@bounces.acme.test', 'duplicate'],
    ]);
    const email = await h.email(sent.id);
    expect(email.recipients[0].status).toBe('bounced');
    expect(email.events.filter((e: { event: string }) => e.event === 'email.bounced')).toHaveLength(1);
  });
});
