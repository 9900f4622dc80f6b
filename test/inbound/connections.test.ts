import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.ts';
import { ReturnPathDomains } from '../../src/domains/return-path.ts';
import { startInboundListener, type InboundListenerOptions } from '../../src/inbound/server.ts';
import { RETURN_PATH, startInbound, type InboundHarness } from './harness.ts';
import { RawSmtp } from './smtp-client.ts';

async function listener(h: InboundHarness, options: Partial<InboundListenerOptions>) {
  const s = h.server.services;
  const l = await startInboundListener(
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
