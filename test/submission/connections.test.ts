import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { RawSmtp } from '../inbound/smtp-client.ts';
import { submissionEnv } from './env.ts';

/** A TCP connection from a loopback address that sends nothing; resolves once connected. */
async function idle(port: number, localAddress: string): Promise<{ socket: Socket; closed: Promise<number> }> {
  const socket = connect({ host: '127.0.0.1', port, localAddress });
  socket.on('error', () => undefined);
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now())));
  await new Promise((resolve) => socket.once('connect', resolve));
  return { socket, closed };
}

const within = <T>(ms: number, p: Promise<T>) => Promise.race([p, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms).unref())]);

describe('submission connections per client address', () => {
  it('a few addresses cannot fill the connection cap: past 10 per address they get 421 at once and another address is served', async () => {
    const env = await submissionEnv('sqlite', { submission: { maxConnections: 60 } });
    const held: RawSmtp[] = [];
    const refused: number[] = [];
    for (let a = 10; a < 15; a++) {
      for (let i = 0; i < 12; i++) {
        const smtp = await RawSmtp.connect(env.ports.submission, { localAddress: `127.0.0.${a}` });
        if (smtp.greeting.code === 220) held.push(smtp);
        else refused.push(smtp.greeting.code);
      }
    }
    expect(held.length).toBe(50);
    expect(refused).toStrictEqual(Array(10).fill(421));
    const legit = await RawSmtp.connect(env.ports.submission, { localAddress: '127.0.0.20' });
    expect(legit.greeting.code).toBe(220);
    await Promise.all([legit, ...held].map((s) => s.quit()));
  });

  it('raw TCP on the implicit-TLS port that never starts TLS: past 10 per address dropped at once, the rest at the handshake deadline; a TLS client is served meanwhile', async () => {
    const env = await submissionEnv('sqlite', { submission: { handshakeTimeoutMs: 2000 } });
    const started = performance.now();
    const sockets = [];
    for (let i = 0; i < 12; i++) sockets.push(await idle(env.ports.submissions, '127.0.0.31'));
    const early = await Promise.all(sockets.slice(10).map((s) => within(1500, s.closed)));
    expect(early.every((t) => t !== 'timeout' && t - started < 1500)).toBe(true);

    const raw = connect({ host: '127.0.0.1', port: env.ports.submissions, localAddress: '127.0.0.32' });
    const secure = tlsConnect({ socket: raw, rejectUnauthorized: false });
    const greeting = await new Promise<string>((resolve, reject) => {
      secure.once('data', (d: Buffer) => resolve(d.toString('latin1')));
      secure.once('error', reject);
    });
    expect(greeting).toMatch(/^220 /);
    secure.destroy();

    const late = await Promise.all(sockets.slice(0, 10).map((s) => within(10_000, s.closed)));
    expect(late.every((t) => t !== 'timeout' && t - started >= 1900)).toBe(true);
  });
});
