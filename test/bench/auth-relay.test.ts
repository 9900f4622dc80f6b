import type { AddressInfo } from 'node:net';
import nodemailer from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { authRelay, type AuthRelay } from '../../bench/lib/smtp.ts';

interface Received {
  user: unknown;
  body: string;
}

/** A real smtp-server on loopback that records each AUTH and each message with its session's user. */
async function upstream(opts: { authOptional: boolean; password: string }) {
  const auths: string[] = [];
  const received: Received[] = [];
  const server = new SMTPServer({
    authOptional: opts.authOptional,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, callback) {
      auths.push(`${auth.username}:${auth.password}`);
      if (auth.password !== opts.password) return callback(new Error('Invalid username or password'));
      callback(null, { user: auth.username });
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({ user: session.user, body: Buffer.concat(chunks).toString('latin1') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { port, auths, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const send = (port: number) =>
  nodemailer
    .createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true })
    .sendMail({ from: 'news@bench.test', to: 'user@dest.test', subject: 'through the hop', text: 'hello through the hop' });

describe("the relay bench's pass-through", () => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  const started = async (target: number, key?: string): Promise<AuthRelay> => {
    const relay = await authRelay(target, key);
    stops.push(() => relay.close());
    return relay;
  };

  it('authenticates a client that cannot, as user bench with the key, and then copies the session', async () => {
    const server = await upstream({ authOptional: false, password: 'the-key' });
    stops.push(server.close);
    const relay = await started(server.port, 'the-key');
    const info = await send(relay.port);
    expect(info.accepted).toEqual(['user@dest.test']);
    expect(server.auths).toEqual(['bench:the-key']);
    expect(server.received).toHaveLength(1);
    expect(server.received[0]).toMatchObject({ user: 'bench' });
    expect(server.received[0]!.body).toContain('hello through the hop');
  });

  it('closes a client whose AUTH the server refuses: nothing is sent', async () => {
    const server = await upstream({ authOptional: false, password: 'the-key' });
    stops.push(server.close);
    const relay = await started(server.port, 'a-wrong-key');
    await expect(send(relay.port)).rejects.toThrow();
    expect(server.auths).toEqual(['bench:a-wrong-key']);
    expect(server.received).toEqual([]);
  });

  it('without a key copies the session as it is, for a server that wants no AUTH', async () => {
    const server = await upstream({ authOptional: true, password: 'the-key' });
    stops.push(server.close);
    const relay = await started(server.port);
    const info = await send(relay.port);
    expect(info.accepted).toEqual(['user@dest.test']);
    expect(server.auths).toEqual([]);
    expect(server.received).toHaveLength(1);
    expect(server.received[0]!.user).toBeUndefined();
    expect(server.received[0]!.body).toContain('hello through the hop');
  });
});
