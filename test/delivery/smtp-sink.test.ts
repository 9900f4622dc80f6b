import SMTPConnection, { type SMTPConnectionOptions } from 'nodemailer/lib/smtp-connection';
import type { NodemailerError } from 'nodemailer/lib/errors';
import { afterEach, describe, expect, it } from 'vitest';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts';

const sinks: SmtpSink[] = [];
afterEach(async () => {
  await Promise.all(sinks.splice(0).map((sink) => sink.close()));
});

async function sink(options?: Parameters<typeof startSmtpSink>[0]): Promise<SmtpSink> {
  const started = await startSmtpSink(options);
  sinks.push(started);
  return started;
}

function connect(target: SmtpSink, extra: SMTPConnectionOptions = {}): Promise<SMTPConnection> {
  const client = new SMTPConnection({
    host: target.host,
    port: target.port,
    name: 'client.test',
    tls: { rejectUnauthorized: false },
    ...extra,
  });
  return new Promise((resolve, reject) => {
    // A refused greeting arrives as an 'error' event without the connect callback running.
    client.on('error', reject);
    client.connect((err) => (err ? reject(err) : resolve(client)));
  });
}

function send(client: SMTPConnection, from: string, to: string, raw: string): Promise<string> {
  return new Promise((resolve, reject) => client.send({ from, to }, Buffer.from(raw), (err, info) => (err ? reject(err) : resolve(info!.response))));
}

async function rejection(promise: Promise<unknown>): Promise<NodemailerError> {
  try {
    await promise;
  } catch (err) {
    return err as NodemailerError;
  }
  throw new Error('expected a rejection');
}

describe('smtp sink', () => {
  it('records envelope, bytes, connection and EHLO name', async () => {
    const target = await sink();
    const client = await connect(target);
    await send(client, 'a@sender.test', 'b@rcpt.test', 'Subject: hi\r\n\r\nbody\r\n');
    const [message] = await target.waitForMessages(1);
    expect(message).toMatchObject({ from: 'a@sender.test', to: ['b@rcpt.test'], helo: 'client.test', secure: false });
    expect(message!.raw.toString()).toBe('Subject: hi\r\n\r\nbody\r\n');
    expect(target.connections).toHaveLength(1);
    expect(message!.connectionId).toBe(target.connections[0]!.id);
    client.close();
  });

  it('follows a per-recipient script: 451 twice at RCPT, then accepts', async () => {
    const target = await sink();
    target.script('greylist@rcpt.test', [
      { rcpt: { reply: { code: 451, message: '4.7.1 Greylisted' } } },
      { rcpt: { reply: { code: 451, message: '4.7.1 Greylisted' } } },
    ]);
    const client = await connect(target);
    for (let i = 0; i < 2; i++) {
      const err = await rejection(send(client, 'a@s.test', 'greylist@rcpt.test', 'x\r\n'));
      expect(err.responseCode).toBe(451);
      expect(err.response).toContain('4.7.1 Greylisted');
      await new Promise<void>((resolve) => client.reset(() => resolve()));
    }
    await send(client, 'a@s.test', 'greylist@rcpt.test', 'x\r\n');
    expect(await target.waitForMessages(1)).toHaveLength(1);
    client.close();
  });

  it('rejects at DATA and at MAIL when scripted', async () => {
    const target = await sink();
    target.script('spam@rcpt.test', [{ data: { reply: { code: 554, message: '5.7.1 Message rejected as spam' } } }]);
    target.script('blocked@sender.test', [{ mail: { reply: { code: 550, message: '5.7.1 Sender blocked' } } }]);
    const client = await connect(target);
    const atData = await rejection(send(client, 'a@s.test', 'spam@rcpt.test', 'x\r\n'));
    expect(atData.responseCode).toBe(554);
    expect(atData.command).toBe('DATA');
    await new Promise<void>((resolve) => client.reset(() => resolve()));
    const atMail = await rejection(send(client, 'blocked@sender.test', 'ok@rcpt.test', 'x\r\n'));
    expect(atMail.responseCode).toBe(550);
    expect(target.messages).toHaveLength(0);
    client.close();
  });

  it('closes refused connections before the greeting, or answers 421', async () => {
    const target = await sink();
    target.refuseConnections(1);
    expect((await rejection(connect(target))).code).toMatch(/ECONNECTION|ESOCKET/);
    target.refuseConnections(1, '421');
    expect((await rejection(connect(target))).responseCode).toBe(421);
    const client = await connect(target);
    expect(target.connections).toHaveLength(3);
    client.close();
  });

  it('offers STARTTLS with a self-signed certificate and requires AUTH when asked', async () => {
    const target = await sink({ tls: true, auth: { user: 'relay', pass: 'secret' } });
    const client = await connect(target, { requireTLS: true });
    expect((await rejection(send(client, 'a@s.test', 'b@r.test', 'x\r\n'))).responseCode).toBe(530);
    await new Promise<void>((resolve, reject) => client.login({ user: 'relay', pass: 'secret' }, (err) => (err ? reject(err) : resolve())));
    await send(client, 'a@s.test', 'b@r.test', 'x\r\n');
    const [message] = await target.waitForMessages(1);
    expect(message).toMatchObject({ secure: true, user: 'relay' });
    client.close();
  });
});
