import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.ts';
import { ReturnPathDomains } from '../../src/domains/return-path.ts';
import { startInboundListener, type InboundListenerOptions } from '../../src/inbound/server.ts';
import { ManualClock } from '../helpers/clock.ts';
import { STORES } from '../helpers/stores.ts';
import { RETURN_PATH, startInbound, testCertificate, type InboundHarness } from './harness.ts';
import { dsn } from './reports.ts';
import { RawSmtp } from './smtp-client.ts';

const POSTMASTER = `postmaster@${RETURN_PATH}`;

/** A second listener over the same services with small limits, so each limit is reachable. */
async function tightListener(h: InboundHarness, options: Partial<InboundListenerOptions>) {
  const s = h.server.services;
  const listener = await startInboundListener(
    {
      db: s.db,
      clock: s.clock,
      log: createLogger('silent'),
      metrics: s.metrics,
      verp: s.tokens.verp,
      unsubscribe: s.tokens.unsubscribe,
      hostname: s.config.server.hostname,
      returnPathDomains: new ReturnPathDomains(s.db, s.clock, RETURN_PATH),
    },
    { host: '127.0.0.1', port: 0, maxSize: 4096, tls: null, closeTimeoutMs: 200, ...options },
  );
  return listener;
}

describe.each(STORES)('inbound limits (%s)', (kind) => {
  it('caps concurrent connections per IP with 421, and admits again once one closes', async () => {
    const h = await startInbound(kind);
    const l = await tightListener(h, { maxConnectionsPerIp: 2 });
    try {
      const a = await RawSmtp.connect(l.port);
      const b = await RawSmtp.connect(l.port);
      expect([a.greeting.code, b.greeting.code]).toEqual([220, 220]);
      const c = await RawSmtp.connect(l.port);
      expect(c.greeting).toEqual({ code: 421, text: '4.7.0 Too many connections, try again later' });
      await c.closed;
      await a.quit();
      await a.closed;
      const d = await RawSmtp.connect(l.port);
      expect(d.greeting.code).toBe(220);
      await Promise.all([b.quit(), d.quit()]);
    } finally {
      await l.close();
    }
  });

  it('refuses recipients over the cap with 452 4.5.3 and messages over the per-IP rate with 451 4.7.1', async () => {
    const clock = new ManualClock();
    const h = await startInbound(kind, { clock });
    const l = await tightListener(h, { maxRecipients: 2, messagesPerMinutePerIp: 2 });
    try {
      const c = await RawSmtp.connect(l.port);
      await c.command('EHLO mx.example.org');
      expect((await c.command('MAIL FROM:<>')).code).toBe(250);
      expect((await c.command(`RCPT TO:<${POSTMASTER}>`)).code).toBe(250);
      expect((await c.command(`RCPT TO:<fbl@${RETURN_PATH}>`)).code).toBe(250);
      expect(await c.command(`RCPT TO:<FBL@${RETURN_PATH}>`)).toEqual({ code: 452, text: '4.5.3 Too many recipients' });
      expect((await c.data('Subject: two\n\nhello\n')).code).toBe(250);
      expect((await c.command('MAIL FROM:<>')).code).toBe(250);
      await c.command('RSET');
      expect(await c.command('MAIL FROM:<>')).toEqual({ code: 451, text: '4.7.1 Too many messages, try again later' });
      clock.advance(60_000);
      expect((await c.command('MAIL FROM:<>')).code).toBe(250);
      await c.quit();
      expect((await h.reports()).map((r) => r.rcpt)).toEqual([POSTMASTER, `fbl@${RETURN_PATH}`]);
    } finally {
      await l.close();
    }
  });

  it('closes an idle session after the socket timeout', async () => {
    const h = await startInbound(kind);
    const l = await tightListener(h, { socketTimeoutMs: 300 });
    try {
      const c = await RawSmtp.connect(l.port);
      await c.command('EHLO mx.example.org');
      const reply = await c.read();
      expect(reply.code).toBe(421);
      await c.closed;
    } finally {
      await l.close();
    }
  });
});

describe('inbound STARTTLS', () => {
  it('offers STARTTLS with the configured certificate and takes a report over TLS', async () => {
    const h = await startInbound(STORES[0]!);
    const sent = await h.delivered();
    const verp = h.verp(sent.recipients[0]!.id);
    const c = await RawSmtp.connect(h.port);
    expect((await c.command('EHLO mx.example.org')).text).toMatch(/^STARTTLS$/m);
    const { socket } = await c.starttls();
    const { cert } = await testCertificate();
    expect(socket.getPeerX509Certificate()!.raw.equals(new (await import('node:crypto')).X509Certificate(cert).raw)).toBe(true);
    expect((await c.command('EHLO mx.example.org')).text).not.toMatch(/^STARTTLS$/m);
    await c.command('MAIL FROM:<>');
    expect((await c.command(`RCPT TO:<${verp}>`)).code).toBe(250);
    expect((await c.data(dsn({ to: verp, recipient: 'user@example.org' }))).code).toBe(250);
    await c.quit();
    expect((await h.email(sent.id)).recipients[0].status).toBe('bounced');
  });
});
