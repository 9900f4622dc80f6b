import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { RawSmtp } from '../inbound/smtp-client.ts';
import { submissionEnv, type SubmissionEnv } from './env.ts';

const plainAuth = (key: string) => `AUTH PLAIN ${Buffer.from(`\0app\0${key}`).toString('base64')}`;
const offersAuth = (ehlo: { text: string }) => /^AUTH /m.test(ehlo.text);

/** A PROXY v2 header for a TCP over IPv4 client. */
function proxyV2(client: string, port: number): Buffer {
  const header = Buffer.alloc(28);
  Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]).copy(header);
  header[12] = 0x21;
  header[13] = 0x11;
  header.writeUInt16BE(12, 14);
  Buffer.from(client.split('.').map(Number)).copy(header, 16);
  Buffer.from([127, 0, 0, 1]).copy(header, 20);
  header.writeUInt16BE(port, 24);
  header.writeUInt16BE(587, 26);
  return header;
}

const proxyV1 = (client: string) => `PROXY TCP4 ${client} 127.0.0.1 40000 587\r\n`;

describe('AUTH before TLS on the submission port', () => {
  it('with the loopback exemption off: EHLO does not offer AUTH, AUTH LOGIN and AUTH PLAIN get 538 before any 334; after STARTTLS both work', async () => {
    const env = await submissionEnv('sqlite', { submission: { loopbackInsecureAuth: false } });
    const smtp = await RawSmtp.connect(env.ports.submission);
    const ehlo = await smtp.command('EHLO client.test');
    expect(ehlo.text).toMatch(/^STARTTLS$/m);
    expect(offersAuth(ehlo)).toBe(false);
    const login = await smtp.command('AUTH LOGIN');
    expect(login).toStrictEqual({ code: 538, text: '5.7.11 Encryption required: issue STARTTLS before AUTH' });
    expect((await smtp.command('AUTH PLAIN')).code).toBe(538);
    expect((await smtp.command(plainAuth(env.ws.apiKey))).code).toBe(538);
    await smtp.starttls();
    const secured = await smtp.command('EHLO client.test');
    expect(offersAuth(secured)).toBe(true);
    expect((await smtp.command('AUTH LOGIN')).code).toBe(334);
    await smtp.command(Buffer.from('app').toString('base64'));
    expect((await smtp.command(Buffer.from(env.ws.apiKey).toString('base64'))).code).toBe(235);
    await smtp.quit();
  });

  it('with the exemption on (the default), a loopback client is still offered AUTH in clear', async () => {
    const env = await submissionEnv('sqlite');
    const smtp = await RawSmtp.connect(env.ports.submission);
    expect(offersAuth(await smtp.command('EHLO client.test'))).toBe(true);
    expect((await smtp.command(plainAuth(env.ws.apiKey))).code).toBe(235);
    await smtp.quit();
  });
});

describe('the PROXY protocol on the submission port', () => {
  async function behindProxy(): Promise<SubmissionEnv> {
    return submissionEnv('sqlite', { submission: { proxyProtocol: { from: ['127.0.0.1/32'] }, handshakeTimeoutMs: 1000 } });
  }

  it('a remote client behind a local proxy (v1 and v2) is not exempt: no AUTH in clear; a loopback one still is', async () => {
    const env = await behindProxy();
    for (const prelude of [proxyV1('192.0.2.7'), proxyV2('192.0.2.7', 40001)]) {
      const remote = await RawSmtp.connect(env.ports.submission, { prelude });
      expect(remote.greeting.code).toBe(220);
      expect(offersAuth(await remote.command('EHLO client.test'))).toBe(false);
      expect((await remote.command('AUTH LOGIN')).code).toBe(538);
      await remote.quit();
    }
    const local = await RawSmtp.connect(env.ports.submission, { prelude: proxyV2('127.0.0.9', 40002) });
    expect((await local.command('EHLO client.test')).code).toBe(250);
    expect((await local.command(plainAuth(env.ws.apiKey))).code).toBe(235);
    await local.quit();
  });

  it('on the implicit-TLS port the header comes before the TLS handshake, even in the same packet as the ClientHello', async () => {
    const env = await behindProxy();
    const raw = connect({ host: '127.0.0.1', port: env.ports.submissions });
    await new Promise((resolve) => raw.once('connect', resolve));
    raw.cork();
    raw.write(proxyV1('192.0.2.7'));
    const secure = tlsConnect({ socket: raw, rejectUnauthorized: false });
    setImmediate(() => raw.uncork());
    const greeting = await new Promise<string>((resolve, reject) => {
      secure.once('data', (d: Buffer) => resolve(d.toString('latin1')));
      secure.once('error', reject);
    });
    expect(greeting).toMatch(/^220 /);
    secure.destroy();
  });

  it('counts AUTH failures per real client: ten bad keys from one do not lock out another behind the same proxy', async () => {
    const env = await behindProxy();
    const guesser = await RawSmtp.connect(env.ports.submission, { prelude: proxyV1('127.0.0.7') });
    await guesser.command('EHLO client.test');
    for (let i = 0; i < 10; i++) expect((await guesser.command(plainAuth('mk_not-a-key'))).code).toBe(535);
    expect((await guesser.command(plainAuth(env.ws.apiKey))).code).toBe(454);
    await guesser.quit();
    const other = await RawSmtp.connect(env.ports.submission, { prelude: proxyV1('127.0.0.8') });
    await other.command('EHLO client.test');
    expect((await other.command(plainAuth(env.ws.apiKey))).code).toBe(235);
    await other.quit();
  });

  it('drops a proxy connection whose header is malformed or late, and refuses a PROXY line from anyone else with 421', async () => {
    const env = await behindProxy();
    for (const prelude of ['PROXY TCP4 not-an-ip 127.0.0.1 1 2\r\n', 'EHLO client.test\r\n', 'PROXY TCP4 192.0.2.7 127.0.0.1 4']) {
      const smtp = await RawSmtp.connect(env.ports.submission, { prelude }).catch((err: Error) => err);
      expect(smtp).toBeInstanceOf(Error);
    }
    const other = await submissionEnv('sqlite', { submission: { proxyProtocol: { from: ['127.0.0.2'] } } });
    const direct = await RawSmtp.connect(other.ports.submission);
    const refused = await direct.command(proxyV1('127.0.0.9').trimEnd());
    expect(refused.code).toBe(421);
    await direct.closed;
  });
});
