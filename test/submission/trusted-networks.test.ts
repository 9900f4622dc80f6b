import { describe, expect, it, onTestFinished } from 'vitest';
import { startServer } from '../../src/main.ts';
import { FROM_DOMAIN } from '../delivery/env.ts';
import { recordingLog } from '../helpers/recording-log.ts';
import { testConfig } from '../helpers/server.ts';
import { scratchStore, STORES } from '../helpers/stores.ts';
import { RawSmtp } from '../inbound/smtp-client.ts';
import { listenersOn, submissionEnv, type SubmissionEnv } from './env.ts';

const from = `shop@${FROM_DOMAIN}`;
const message = (subject: string) => `From: ${from}\r\nTo: a@dest.test\r\nSubject: ${subject}\r\n\r\nHello\r\n`;

const countMessages = async (env: SubmissionEnv) => Number((await env.server.services.db('messages').count({ n: '*' }))[0]!.n);

/** The id of a workspace's first key, as `mailsvc key list` shows it. */
const keyIdOf = async (env: SubmissionEnv, workspaceId: number) => (await env.server.services.tenancy.listKeys(workspaceId))[0]!.id;

/** A session from `localAddress` that does not authenticate: the replies to MAIL FROM and, if it was taken, to the message. */
async function withoutAuth(port: number, localAddress: string, subject: string, sender = from) {
  const smtp = await RawSmtp.connect(port, { localAddress });
  await smtp.command('EHLO printer.test');
  const mail = await smtp.command(`MAIL FROM:<${sender}>`);
  if (mail.code !== 250) {
    await smtp.quit();
    return { mail, data: null };
  }
  expect((await smtp.command('RCPT TO:<a@dest.test>')).code).toBe(250);
  const data = await smtp.data(message(subject));
  await smtp.quit();
  return { mail, data };
}

const queued = (text: string | undefined) => Number(/^2\.0\.0 Ok: queued as (\d+)$/.exec(text ?? '')?.[1]);

describe.each(STORES)('SMTP submission from trusted networks (%s)', (kind) => {
  it('takes mail without AUTH from an address in a trusted network as the key it names, and answers 530 5.7.0 to an address outside it', async () => {
    const env = await submissionEnv(kind);
    const keyId = await keyIdOf(env, env.ws.id);
    const listeners = await listenersOn(env, { trustedNetworks: [{ network: '127.0.0.2/32', keyId }] });

    const inside = await withoutAuth(listeners.ports.submission, '127.0.0.2', 'from the printer');
    expect(inside.mail.code).toBe(250);
    expect(inside.data?.code).toBe(250);
    const id = queued(inside.data?.text);
    const stored = await env.server.api('GET', `/emails/${id}`, { key: env.ws.apiKey });
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({ id, subject: 'from the printer', from });

    const outside = await withoutAuth(listeners.ports.submission, '127.0.0.3', 'from elsewhere');
    expect(outside.mail).toStrictEqual({ code: 530, text: '5.7.0 Authentication required' });
    expect(await countMessages(env)).toBe(1);
  });

  it("holds the network's key to its rights: a domain-scoped key sends from its domain only, and a client that authenticates uses its own key", async () => {
    const env = await submissionEnv(kind);
    const { services } = env.server;
    await env.server.verifiedDomain(env.ws.id, 'other.test');
    const scoped = await services.tenancy.createKey(env.ws.id, { domain: FROM_DOMAIN });
    const other = await env.server.workspace();
    await env.server.verifiedDomain(other.id, 'elsewhere.test');
    const listeners = await listenersOn(env, { trustedNetworks: [{ network: '127.0.0.0/8', keyId: scoped.row.id }] });

    const offDomain = await withoutAuth(listeners.ports.submission, '127.0.0.2', 'not its domain', 'x@other.test');
    expect(offDomain.mail.code).toBe(550);
    expect(offDomain.mail.text).toMatch(/^5\.7\.1 Sender domain other\.test not allowed/);
    expect(await countMessages(env)).toBe(0);

    const smtp = await RawSmtp.connect(listeners.ports.submission, { localAddress: '127.0.0.2' });
    await smtp.command('EHLO app.test');
    expect((await smtp.command(`AUTH PLAIN ${Buffer.from(`\0app\0${other.apiKey}`).toString('base64')}`)).code).toBe(235);
    expect((await smtp.command('MAIL FROM:<y@elsewhere.test>')).code).toBe(250);
    expect((await smtp.command('RCPT TO:<a@dest.test>')).code).toBe(250);
    const reply = await smtp.data(`From: y@elsewhere.test\r\nSubject: its own key\r\n\r\nHi\r\n`);
    await smtp.quit();
    const id = queued(reply.text);
    expect((await env.server.api('GET', `/emails/${id}`, { key: other.apiKey })).status).toBe(200);
    expect((await env.server.api('GET', `/emails/${id}`, { key: env.ws.apiKey })).status).toBe(404);
  });

  it('refuses a trusted network whose key was revoked with 530 5.7.0, and the log names the key', async () => {
    const env = await submissionEnv(kind);
    const keyId = await keyIdOf(env, env.ws.id);
    const recorded = recordingLog();
    const listeners = await listenersOn(env, { trustedNetworks: [{ network: '127.0.0.2', keyId }] }, recorded.log);
    expect((await withoutAuth(listeners.ports.submission, '127.0.0.2', 'before')).data?.code).toBe(250);

    await env.server.services.tenancy.revokeKey(keyId);
    const after = await withoutAuth(listeners.ports.submission, '127.0.0.2', 'after');
    expect(after.mail).toStrictEqual({ code: 530, text: '5.7.0 Authentication required' });
    const line = await recorded.next((l) => l.level === 'error' && l.fields.key_id === keyId);
    expect(line.msg).toBe(`submission.trustedNetworks names API key ${keyId}, which is revoked or unknown: its network must authenticate`);
    expect(line.fields).toMatchObject({ ip: '127.0.0.2' });
    expect(await countMessages(env)).toBe(1);
  });

  it('keeps the cap on commands before AUTH for a client outside the trusted networks: the tenth gets 421 and the connection closes, an AUTH exchange counts as one; one inside is not capped', async () => {
    const env = await submissionEnv(kind);
    const keyId = await keyIdOf(env, env.ws.id);
    const listeners = await listenersOn(env, { trustedNetworks: [{ network: '127.0.0.2', keyId }] });

    const outside = await RawSmtp.connect(listeners.ports.submission, { localAddress: '127.0.0.3' });
    expect((await outside.command('EHLO stranger.test')).code).toBe(250);
    for (let i = 2; i < 10; i++) expect((await outside.command('NOOP')).code).toBe(250);
    expect(await outside.command('NOOP')).toStrictEqual({ code: 421, text: '4.7.0 Too many commands without authentication' });
    await outside.closed;

    // The lines of an AUTH LOGIN exchange are not commands: eight counted, then AUTH goes through.
    const authenticating = await RawSmtp.connect(listeners.ports.submission, { localAddress: '127.0.0.3' });
    expect((await authenticating.command('EHLO app.test')).code).toBe(250);
    for (let i = 2; i <= 8; i++) expect((await authenticating.command('NOOP')).code).toBe(250);
    expect((await authenticating.command('AUTH LOGIN')).code).toBe(334);
    expect((await authenticating.command(Buffer.from('app').toString('base64'))).code).toBe(334);
    expect((await authenticating.command(Buffer.from(env.ws.apiKey).toString('base64'))).code).toBe(235);
    for (let i = 0; i < 3; i++) expect((await authenticating.command('NOOP')).code).toBe(250);
    expect((await authenticating.command(`MAIL FROM:<${from}>`)).code).toBe(250);
    await authenticating.quit();

    const inside = await RawSmtp.connect(listeners.ports.submission, { localAddress: '127.0.0.2' });
    expect((await inside.command('EHLO printer.test')).code).toBe(250);
    for (let i = 2; i < 15; i++) expect((await inside.command('NOOP')).code).toBe(250);
    expect((await inside.command(`MAIL FROM:<${from}>`)).code).toBe(250);
    await inside.quit();
  });

  it('says at start which trusted network names a key that does not exist', async () => {
    const store = await scratchStore(kind);
    const recorded = recordingLog();
    const trustedNetworks = [{ network: '10.9.0.0/16', keyId: 999 }];
    const server = await startServer(testConfig(store, { submission: { host: '127.0.0.1', port: 0, tlsPort: 0, trustedNetworks } }), {
      roles: ['submission'],
      overrides: { log: recorded.log },
    });
    onTestFinished(async () => {
      await server.close();
      await store.drop();
    });
    expect(recorded.lines.filter((l) => l.level === 'error')).toStrictEqual([
      {
        level: 'error',
        fields: { phase: 'start', role: 'submission', network: '10.9.0.0/16', key_id: 999 },
        msg: 'submission.trustedNetworks[0] names API key 999, which is revoked or unknown: clients in 10.9.0.0/16 must authenticate',
      },
    ]);
  });
});
