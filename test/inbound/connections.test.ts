import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.ts';
import { ReturnPathDomains } from '../../src/domains/return-path.ts';
import { startInboundListener, type InboundListenerOptions } from '../../src/inbound/server.ts';
import { RETURN_PATH, startInbound, type InboundHarness } from './harness.ts';
import { dsn } from './reports.ts';
import { RawSmtp, sendMail } from './smtp-client.ts';

async function listener(h: InboundHarness, options: Partial<InboundListenerOptions>, log = createLogger('silent')) {
  const s = h.server.services;
  const l = await startInboundListener(
    {
      db: s.db,
      clock: s.clock,
      log,
      metrics: s.metrics,
      verp: s.tokens.verp,
      unsubscribe: s.tokens.unsubscribe,
      hostname: s.config.server.hostname,
      returnPathDomains: new ReturnPathDomains(s.db, s.clock, RETURN_PATH),
    },
    { host: '127.0.0.1', port: 0, maxSize: 1_000_000, tls: null, closeTimeoutMs: 200, ...options },
  );
  return l;
}

const proxied = (client: string) => `PROXY TCP4 ${client} 127.0.0.1 40000 25\r\n`;

describe('inbound connections', () => {
  it('behind a configured proxy, the per-address limit counts the client the PROXY header names, not the proxy', async () => {
    const h = await startInbound('sqlite');
    const l = await listener(h, { maxConnectionsPerIp: 2, proxyFrom: ['127.0.0.0/8'] });
    try {
      const a = await RawSmtp.connect(l.port, { prelude: proxied('192.0.2.1') });
      const b = await RawSmtp.connect(l.port, { prelude: proxied('192.0.2.1') });
      const over = await RawSmtp.connect(l.port, { prelude: proxied('192.0.2.1') });
      const other = await RawSmtp.connect(l.port, { prelude: proxied('192.0.2.2') });
      expect([a.greeting.code, b.greeting.code, over.greeting.code, other.greeting.code]).toStrictEqual([220, 220, 421, 220]);
      await Promise.all([a.quit(), b.quit(), other.quit()]);
    } finally {
      await l.close();
    }
  });
});

describe('inbound connections per client address', () => {
  it('counts IPv6 clients by their /64: addresses of one /64 share the limit, another /64 is served', async () => {
    const h = await startInbound('sqlite');
    const l = await listener(h, { maxConnectionsPerIp: 2, proxyFrom: ['127.0.0.1'] });
    const v6 = (client: string) => `PROXY TCP6 ${client} ::1 40000 25\r\n`;
    try {
      const a = await RawSmtp.connect(l.port, { prelude: v6('2001:db8:1:1::1') });
      const b = await RawSmtp.connect(l.port, { prelude: v6('2001:db8:1:1:ffff::2') });
      const same = await RawSmtp.connect(l.port, { prelude: v6('2001:0db8:0001:0001::3') });
      const other = await RawSmtp.connect(l.port, { prelude: v6('2001:db8:1:2::1') });
      expect([a.greeting.code, b.greeting.code, same.greeting.code, other.greeting.code]).toStrictEqual([220, 220, 421, 220]);
      await Promise.all([a.quit(), b.quit(), other.quit()]);
    } finally {
      await l.close();
    }
  });

  it('a few addresses cannot fill the connection cap: past 10 per address they get 421 at once and another address is served', async () => {
    const h = await startInbound('sqlite');
    const l = await listener(h, { maxClients: 60 });
    try {
      const held: RawSmtp[] = [];
      const refused: number[] = [];
      for (let a = 10; a < 15; a++) {
        for (let i = 0; i < 12; i++) {
          const smtp = await RawSmtp.connect(l.port, { localAddress: `127.0.0.${a}` });
          if (smtp.greeting.code === 220) held.push(smtp);
          else refused.push(smtp.greeting.code);
        }
      }
      expect(held.length).toBe(50);
      expect(refused).toStrictEqual(Array(10).fill(421));
      const legit = await RawSmtp.connect(l.port, { localAddress: '127.0.0.20' });
      expect(legit.greeting.code).toBe(220);
      await Promise.all([legit, ...held].map((c) => c.quit()));
    } finally {
      await l.close();
    }
  });
});

describe('what the inbound listener logs', () => {
  it('a DSN naming 1,000 addresses logs a line of under 2 KB: the count and the first few', async () => {
    const h = await startInbound('sqlite');
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    // A generous parse budget: this is about the log line, and on a loaded machine the default
    // 2 s budget was once spent before the report was parsed (it was then stored unparsed).
    const l = await listener(h, { parse: { workers: 1, budgetMs: 60_000, maxQueued: 5 } }, log);
    try {
      const sent = await h.delivered();
      const verp = h.verp(sent.recipients[0]!.id);
      const blocks = Array.from({ length: 1000 }, (_, i) => `Final-Recipient: rfc822; stranger${i}@example.org\nAction: failed\nStatus: 5.1.1\n`);
      const body = dsn({ to: verp, recipient: 'user@example.org' }).replace(/Final-Recipient:[\s\S]*?Diagnostic-Code: [^\n]*\n/, blocks.join('\n'));
      const r = await sendMail(l.port, '', [verp], body);
      expect(r.data?.code).toBe(250);
      const report = lines.find((line) => line.includes('"phase":"report"'));
      expect(report).toMatch(/1000 addresses/);
      expect(report).toMatch(/stranger0@example\.org/);
      expect(Buffer.byteLength(report!)).toBeLessThan(2048);
      expect(lines.every((line) => Buffer.byteLength(line) < 2048)).toBe(true);
    } finally {
      await l.close();
    }
  });
});
