import { createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSmtpTransport, type SmtpTransportOptions } from '../../src/delivery/smtp-transport.ts';
import type { SmtpTransport } from '../../src/delivery/transport.ts';
import { createDnsResolver } from '../../src/dns/resolver.ts';
import { startTestDns } from '../helpers/dns-server.ts';
import { startSmtpSink, testCertificate, type SmtpSink, type SmtpSinkOptions } from '../helpers/smtp-sink.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function sink(options?: SmtpSinkOptions): Promise<SmtpSink> {
  const started = await startSmtpSink(options);
  cleanups.push(() => started.close());
  return started;
}

function transport(overrides: Partial<SmtpTransportOptions> = {}): SmtpTransport {
  const created = createSmtpTransport({
    heloName: 'mta.mailsvc.test',
    tls: 'opportunistic',
    maxConnectionsPerHost: 10,
    connectTimeoutMs: 2000,
    commandTimeoutMs: 2000,
    dataTimeoutMs: 2000,
    ...overrides,
  });
  cleanups.push(() => created.close());
  return created;
}

function message(n = 1): Buffer {
  return Buffer.from(`From: a@example.test\r\nTo: r${n}@dest.test\r\nSubject: m${n}\r\n\r\nbody ${n}\r\n`);
}

/**
 * A server that offers STARTTLS and then answers the handshake with plaintext, as a broken TLS
 * stack might; without STARTTLS it takes mail normally.
 */
async function brokenTlsServer(): Promise<{ port: number; delivered: () => number; close: () => Promise<void> }> {
  let delivered = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.write('220 broken.test ESMTP\r\n');
    let buffer = '';
    let inData = false;
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('latin1');
      let end: number;
      while ((end = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (inData) {
          if (line === '.') {
            inData = false;
            delivered++;
            socket.write('250 2.0.0 queued\r\n');
          }
          continue;
        }
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO') socket.write('250-broken.test\r\n250 STARTTLS\r\n');
        else if (verb === 'STAR') {
          socket.write('220 2.0.0 Ready to start TLS\r\n');
          socket.end('this is not a TLS server hello\r\n');
          return;
        } else if (verb === 'DATA') {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else if (verb === 'QUIT') socket.end('221 bye\r\n');
        else socket.write('250 2.0.0 ok\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    delivered: () => delivered,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const ENVELOPE = { from: 'b+token@bounces.example.test', to: 'rcpt@dest.test' };

describe('createSmtpTransport', () => {
  it('delivers one transaction with the envelope, the bytes and our EHLO name', async () => {
    const target = await sink();
    const smtp = transport();
    const result = await smtp.send({ host: target.host, port: target.port, envelope: ENVELOPE, raw: message() });
    expect(result).toMatchObject({ ok: true, code: 250, host: '127.0.0.1' });
    const [received] = await target.waitForMessages(1);
    expect(received).toMatchObject({ from: ENVELOPE.from, to: [ENVELOPE.to], helo: 'mta.mailsvc.test' });
    expect(received!.raw.equals(message())).toBe(true);
  });

  it('declares BODY=8BITMIME for a copy with 8-bit bytes, and nothing for an ASCII one', async () => {
    const target = await sink();
    const smtp = transport();
    const eightBit = Buffer.from('From: a@example.test\r\nSubject: caf\xe9\r\n\r\nd\xe9j\xe0 vu\r\n', 'latin1');
    expect(await smtp.send({ host: target.host, port: target.port, envelope: ENVELOPE, raw: eightBit })).toMatchObject({ ok: true });
    expect(await smtp.send({ host: target.host, port: target.port, envelope: ENVELOPE, raw: message() })).toMatchObject({ ok: true });
    const received = await target.waitForMessages(2);
    expect(received.map((m) => m.body)).toStrictEqual(['8BITMIME', null]);
    expect(received[0]!.raw.equals(eightBit)).toBe(true);
  });

  it('dot-stuffs lines that start with a dot, so they arrive as sent and no line ends the data early', async () => {
    const target = await sink();
    const smtp = transport();
    const dotted = Buffer.from('From: a@example.test\r\nSubject: dots\r\n\r\n.\r\n..two\r\n.three\r\nlast.\r\n.\r\n', 'latin1');
    expect(await smtp.send({ host: target.host, port: target.port, envelope: ENVELOPE, raw: dotted })).toMatchObject({ ok: true });
    const [received] = await target.waitForMessages(1);
    expect(received!.raw.toString('latin1')).toBe(dotted.toString('latin1'));
  });

  it('reports a 550 at RCPT as permanent with the reply, and keeps the connection for the next message', async () => {
    const target = await sink();
    target.script('nobody@dest.test', [{ rcpt: { reply: { code: 550, message: '5.1.1 <nobody@dest.test>: user unknown' } } }]);
    const smtp = transport();
    const refused = await smtp.send({
      host: target.host,
      port: target.port,
      envelope: { from: ENVELOPE.from, to: 'nobody@dest.test' },
      raw: message(),
    });
    expect(refused).toEqual({
      ok: false,
      stage: 'rcpt',
      code: 550,
      response: '550 5.1.1 <nobody@dest.test>: user unknown',
      host: '127.0.0.1',
      temporary: false,
      tls: { secure: false, verified: false, problem: 'no TLS' },
    });
    const next = await smtp.send({ host: target.host, port: target.port, envelope: ENVELOPE, raw: message(2) });
    expect(next.ok).toBe(true);
    expect(target.connections).toHaveLength(1);
    expect(target.messages).toHaveLength(1);
  });

  it('reports 451 at RCPT as temporary, then delivers on a later attempt', async () => {
    const target = await sink();
    const greylisted = { code: 451, message: '4.7.1 Greylisted, try again later' };
    target.script(ENVELOPE.to, [{ rcpt: { reply: greylisted } }, { rcpt: { reply: greylisted } }]);
    const smtp = transport();
    const request = { host: target.host, port: target.port, envelope: ENVELOPE, raw: message() };
    for (let i = 0; i < 2; i++) {
      expect(await smtp.send(request)).toMatchObject({ ok: false, stage: 'rcpt', code: 451, temporary: true });
    }
    expect(await smtp.send(request)).toMatchObject({ ok: true });
  });

  it('tells MAIL and DATA refusals apart', async () => {
    const target = await sink();
    target.script('spam@dest.test', [{ data: { reply: { code: 554, message: '5.7.1 Message rejected as spam' } } }]);
    target.script('blocked@bounces.example.test', [{ mail: { reply: { code: 553, message: '5.7.1 Sender rejected' } } }]);
    const smtp = transport();
    const atData = await smtp.send({
      host: target.host,
      port: target.port,
      envelope: { from: ENVELOPE.from, to: 'spam@dest.test' },
      raw: message(),
    });
    expect(atData).toMatchObject({ ok: false, stage: 'data', code: 554, temporary: false });
    expect(atData.ok === false && atData.response).toContain('5.7.1 Message rejected as spam');
    const atMail = await smtp.send({
      host: target.host,
      port: target.port,
      envelope: { from: 'blocked@bounces.example.test', to: ENVELOPE.to },
      raw: message(),
    });
    expect(atMail).toMatchObject({ ok: false, stage: 'mail', code: 553, temporary: false });
  });

  it('times out a server that stalls after the data, and drops that connection', async () => {
    const target = await sink();
    target.script(ENVELOPE.to, [{ data: { stallMs: 5000 } }]);
    const smtp = transport({ dataTimeoutMs: 300 });
    const started = Date.now();
    const result = await smtp.send({ host: target.host, port: target.port, envelope: ENVELOPE, raw: message() });
    expect(result).toMatchObject({ ok: false, stage: 'timeout', code: null, temporary: true });
    expect(Date.now() - started).toBeLessThan(3000);
    await target.waitFor(() => target.connections.every((connection) => !connection.open), 'connection closed');
    expect(smtp.stats().open).toBe(0);
  });

  it('times out a server that never greets', async () => {
    const target = await sink();
    target.stallGreeting(5000);
    const smtp = transport({ connectTimeoutMs: 300 });
    const result = await smtp.send({ host: target.host, port: target.port, envelope: ENVELOPE, raw: message() });
    expect(result).toMatchObject({ ok: false, stage: 'timeout', code: null, temporary: true });
  });

  it('reports refused connections and 421 greetings as temporary connect failures', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const smtp = transport();
    expect(await smtp.send({ host: '127.0.0.1', port: closedPort, envelope: ENVELOPE, raw: message() })).toMatchObject({
      ok: false,
      stage: 'connect',
      code: null,
      temporary: true,
    });
    const target = await sink();
    target.refuseConnections(1, '421');
    expect(await smtp.send({ host: target.host, port: target.port, envelope: ENVELOPE, raw: message() })).toMatchObject({
      ok: false,
      stage: 'connect',
      code: 421,
      temporary: true,
    });
    target.refuseConnections(1, 'close');
    expect(await smtp.send({ host: target.host, port: target.port, envelope: ENVELOPE, raw: message() })).toMatchObject({
      ok: false,
      stage: 'connect',
      temporary: true,
    });
  });

  it('sends 200 messages to one host over at most maxConnectionsPerHost reused connections', async () => {
    const target = await sink();
    const smtp = transport({ maxConnectionsPerHost: 5 });
    let peak = 0;
    const started = performance.now();
    const results = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const result = await smtp.send({
          host: target.host,
          port: target.port,
          envelope: { from: ENVELOPE.from, to: `r${i}@dest.test` },
          raw: message(i),
        });
        peak = Math.max(peak, smtp.stats().perHost[`${target.host}:${target.port}`] ?? 0);
        return result;
      }),
    );
    const elapsed = performance.now() - started;
    expect(results.every((result) => result.ok)).toBe(true);
    await target.waitForMessages(200);
    expect(target.connections.length).toBeLessThanOrEqual(5);
    expect(peak).toBeLessThanOrEqual(5);
    for (const connection of target.connections) expect(connection.transactions).toBeGreaterThan(1);
    const recipients = new Set(target.messages.map((received) => received.to[0]));
    expect(recipients.size).toBe(200);
    console.info(`200 sends over ${target.connections.length} connections in ${elapsed.toFixed(0)} ms ` + `(${((200 / elapsed) * 1000).toFixed(0)} messages/s)`);
  });

  it('queues callers beyond the cap and serves them in turn on one connection', async () => {
    const target = await sink();
    const smtp = transport({ maxConnectionsPerHost: 1 });
    const results = await Promise.all([1, 2, 3].map((n) => smtp.send({ host: target.host, port: target.port, envelope: ENVELOPE, raw: message(n) })));
    expect(results.map((result) => result.ok)).toEqual([true, true, true]);
    expect(target.connections).toHaveLength(1);
    expect(target.messages.map((received) => received.raw.toString().match(/m(\d)/)![1])).toEqual(['1', '2', '3']);
  });

  it('uses STARTTLS when offered, accepting a self-signed certificate in opportunistic mode', async () => {
    const target = await sink({ tls: true });
    const smtp = transport();
    expect(await smtp.send({ host: target.host, port: target.port, envelope: ENVELOPE, raw: message() })).toMatchObject({
      ok: true,
    });
    expect((await target.waitForMessages(1))[0]!.secure).toBe(true);
  });

  it('says how each connection was protected, and a send asking for verified TLS gets a connection of its own, refused when the certificate is not trusted', async () => {
    const target = await sink({ tls: true });
    const smtp = transport();
    const plain = await smtp.send({ host: target.host, port: target.port, envelope: ENVELOPE, raw: message() });
    expect(plain).toMatchObject({ ok: true, tls: { secure: true, verified: false, problem: expect.stringMatching(/^certificate not trusted \(/) } });
    const verified = await smtp.send({ host: target.host, port: target.port, envelope: ENVELOPE, raw: message(2), verifyTls: true });
    expect(verified).toMatchObject({ ok: false, stage: 'tls', temporary: true });
    expect(target.connections).toHaveLength(2);
    expect(target.messages).toHaveLength(1);
  });

  it('retries in plaintext when an opportunistic TLS handshake fails, but not in required mode', async () => {
    const broken = await brokenTlsServer();
    cleanups.push(() => broken.close());
    const smtp = transport();
    expect(await smtp.send({ host: '127.0.0.1', port: broken.port, envelope: ENVELOPE, raw: message() })).toMatchObject({
      ok: true,
    });
    expect(broken.delivered()).toBe(1);
    const strict = transport({ tls: 'required' });
    expect(await strict.send({ host: '127.0.0.1', port: broken.port, envelope: ENVELOPE, raw: message() })).toMatchObject({ ok: false, stage: 'tls', temporary: true });
    expect(broken.delivered()).toBe(1);
  });

  it('times out a stalled DATA reply on a STARTTLS connection too', async () => {
    const target = await sink({ tls: true });
    target.script(ENVELOPE.to, [{ data: { stallMs: 5000 } }]);
    const smtp = transport({ dataTimeoutMs: 300 });
    const result = await smtp.send({ host: target.host, port: target.port, envelope: ENVELOPE, raw: message() });
    expect(result).toMatchObject({ ok: false, stage: 'timeout', temporary: true });
  });

  it('keeps to the overall cap across destinations, handing the slot on', async () => {
    const [a, b] = await Promise.all([sink(), sink()]);
    const smtp = transport({ maxConnections: 1, maxConnectionsPerHost: 5 });
    let peak = 0;
    const results = await Promise.all(
      [a, b, a, b, a, b].map(async (target, i) => {
        const result = await smtp.send({ host: target.host, port: target.port, envelope: ENVELOPE, raw: message(i) });
        peak = Math.max(peak, smtp.stats().open);
        return result;
      }),
    );
    expect(results.every((result) => result.ok)).toBe(true);
    expect(peak).toBeLessThanOrEqual(1);
    expect(a.messages.length + b.messages.length).toBe(6);
  });

  it('in required mode refuses a server without TLS or with an untrusted certificate, and verifies a trusted one', async () => {
    const plain = await sink();
    const strict = transport({ tls: 'required' });
    expect(await strict.send({ host: plain.host, port: plain.port, envelope: ENVELOPE, raw: message() })).toMatchObject({
      ok: false,
      stage: 'tls',
      temporary: true,
    });
    expect(plain.messages).toHaveLength(0);
    const tlsSink = await sink({ tls: true });
    expect(await strict.send({ host: tlsSink.host, port: tlsSink.port, envelope: ENVELOPE, raw: message() })).toMatchObject({ ok: false, stage: 'tls', temporary: true });
    const trusting = transport({ tls: 'required', tlsCa: (await testCertificate()).cert });
    expect(await trusting.send({ host: tlsSink.host, port: tlsSink.port, envelope: ENVELOPE, raw: message() })).toMatchObject({ ok: true });
    expect((await tlsSink.waitForMessages(1))[0]!.secure).toBe(true);
  });

  it('sends everything through the relay with AUTH, whatever the MX host', async () => {
    const relay = await sink({ auth: { user: 'relayuser', pass: 'relaypass' } });
    const smtp = transport({ relay: { host: relay.host, port: relay.port, user: 'relayuser', pass: 'relaypass' } });
    const result = await smtp.send({ host: 'mx.unreachable.invalid', port: 25, envelope: ENVELOPE, raw: message() });
    expect(result).toMatchObject({ ok: true, host: '127.0.0.1' });
    expect((await relay.waitForMessages(1))[0]).toMatchObject({ user: 'relayuser', to: [ENVELOPE.to] });
    const wrong = transport({ relay: { host: relay.host, port: relay.port, user: 'relayuser', pass: 'nope' } });
    expect(await wrong.send({ host: 'x', port: 25, envelope: ENVELOPE, raw: message() })).toMatchObject({
      ok: false,
      stage: 'auth',
      code: 535,
      temporary: true,
    });
  });

  it('resolves MX host names through the configured DNS servers', async () => {
    const dns = await startTestDns();
    cleanups.push(() => dns.close());
    dns.set('mx.dest.test', 'A', '127.0.0.1');
    const target = await sink();
    const smtp = transport({ dns: createDnsResolver([dns.address], 2000) });
    const result = await smtp.send({ host: 'mx.dest.test', port: target.port, envelope: ENVELOPE, raw: message() });
    expect(result).toMatchObject({ ok: true, host: 'mx.dest.test' });
    expect(dns.queries).toContainEqual({ name: 'mx.dest.test', type: 'A' });
    const missing = await smtp.send({ host: 'gone.dest.test', port: target.port, envelope: ENVELOPE, raw: message() });
    expect(missing).toMatchObject({ ok: false, stage: 'connect', code: null, temporary: true });
  });

  it('closes idle connections after the idle timeout', async () => {
    const target = await sink();
    const smtp = transport({ idleTimeoutMs: 100 });
    await smtp.send({ host: target.host, port: target.port, envelope: ENVELOPE, raw: message() });
    await target.waitFor(() => target.connections.length === 1 && !target.connections[0]!.open, 'idle close');
    // Counted a moment after its close, as the receiver may still count it (CLOSE_GRACE_MS).
    await vi.waitFor(() => expect(smtp.stats()).toEqual({ open: 0, perHost: {} }), { timeout: 2000, interval: 20 });
  });

  it('recovers when the server dropped a pooled connection', async () => {
    const target = await sink();
    const smtp = transport();
    const request = { host: target.host, port: target.port, envelope: ENVELOPE, raw: message() };
    expect((await smtp.send(request)).ok).toBe(true);
    await target.waitFor(() => target.connections[0]!.transactions === 1, 'first transaction');
    target.dropConnections();
    expect((await smtp.send(request)).ok).toBe(true);
    expect(target.messages).toHaveLength(2);
  });

  it('refuses new sends after close and leaves nothing open', async () => {
    const target = await sink();
    const smtp = transport();
    await smtp.send({ host: target.host, port: target.port, envelope: ENVELOPE, raw: message() });
    await smtp.close();
    expect(smtp.stats().open).toBe(0);
    expect(await smtp.send({ host: target.host, port: target.port, envelope: ENVELOPE, raw: message() })).toMatchObject({
      ok: false,
      stage: 'connect',
      temporary: true,
    });
  });
});
