import { describe, expect, it } from 'vitest';
import { FROM_DOMAIN } from '../delivery/env.ts';
import { STORES } from '../helpers/stores.ts';
import { RawSmtp, type Reply } from '../inbound/smtp-client.ts';
import { listenersOn, queuedId, submissionEnv, type SubmissionEnv } from './env.ts';

const from = `shop@${FROM_DOMAIN}`;
const countMessages = async (env: SubmissionEnv) => Number((await env.server.services.db('messages').count({ n: '*' }))[0]!.n);

async function authenticated(port: number, key: string): Promise<RawSmtp> {
  const smtp = await RawSmtp.connect(port);
  await smtp.command('EHLO client.test');
  expect((await smtp.command(`AUTH PLAIN ${Buffer.from(`\0app\0${key}`).toString('base64')}`)).code).toBe(235);
  return smtp;
}

/** A well-behaved client's message, sent while a hostile session is going on. */
const goodSend = (env: SubmissionEnv, subject: string) =>
  env.client().sendMail({ envelope: { from, to: ['ok@dest.test'] }, raw: Buffer.from(`From: ${from}\r\nSubject: ${subject}\r\n\r\nfine\r\n`) });

/** Replies until the server closes the connection. */
async function repliesUntilClosed(smtp: RawSmtp): Promise<Reply[]> {
  const out: Reply[] = [];
  for (;;) {
    try {
      out.push(await smtp.read());
    } catch {
      return out;
    }
  }
}

describe.each(STORES)('SMTP submission under hostile sessions (%s)', (kind) => {
  it('pipelined garbage ends with 421 and a close; a command line over 1 MB is refused; others are served meanwhile', async () => {
    const env = await submissionEnv(kind);
    const garbage = await RawSmtp.connect(env.ports.submission);
    garbage.write(Array.from({ length: 50 }, (_, i) => `\x00\xff GARBAGE ${i} ${'%'.repeat(100)}\r\n`).join(''));
    const [replies, good] = await Promise.all([repliesUntilClosed(garbage), goodSend(env, 'during garbage')]);
    expect(replies.at(-1)!.code).toBe(421);
    expect(replies.slice(0, -1).every((r) => r.code === 500)).toBe(true);
    expect(queuedId(good.response)).toBeGreaterThan(0);

    const long = await authenticated(env.ports.submission, env.ws.apiKey);
    long.write(`MAIL FROM:<${'a'.repeat(1_100_000)}@${FROM_DOMAIN}>\r\n`);
    const answer = await repliesUntilClosed(long);
    expect(answer).toStrictEqual([{ code: 421, text: 'Error: Command line too long' }]);
    expect(queuedId((await goodSend(env, 'after long line')).response)).toBeGreaterThan(0);
    expect(await countMessages(env)).toBe(2);
  });

  it('a header line over 1 MB in DATA gets 550 5.6.0 and nothing is stored; a body line over 1 MB is wrapped, not refused', async () => {
    const env = await submissionEnv(kind);
    const smtp = await authenticated(env.ports.submission, env.ws.apiKey);
    const transaction = async (message: string) => {
      expect((await smtp.command(`MAIL FROM:<${from}>`)).code).toBe(250);
      expect((await smtp.command('RCPT TO:<a@dest.test>')).code).toBe(250);
      return smtp.data(message);
    };
    const header = await transaction(`From: ${from}\r\nSubject: ${'s'.repeat(1_100_000)}\r\n\r\nhi\r\n`);
    expect(header.code).toBe(550);
    expect(header.text).toMatch(/^5\.6\.0 Header block over/);
    expect(await countMessages(env)).toBe(0);
    const body = await transaction(`From: ${from}\r\nSubject: long line\r\n\r\n${'b'.repeat(1_100_000)}\r\n`);
    expect(body.text).toMatch(/^2\.0\.0 Ok: queued as \d+$/);
    await smtp.quit();
    const row = await env.server.services.db('message_contents').first('content', 'raw');
    expect(JSON.parse(row.content)).toStrictEqual({ kind: 'mime' });
    const raw = Buffer.from(row.raw).toString('latin1');
    expect(Math.max(...raw.split('\r\n').map((l) => l.length))).toBeLessThanOrEqual(998);
  });

  it('10,000 pipelined RCPT: 100 accepted, the rest 452 4.5.3, and the message goes to the 100', async () => {
    const env = await submissionEnv(kind);
    const smtp = await authenticated(env.ports.submission, env.ws.apiKey);
    expect((await smtp.command(`MAIL FROM:<${from}>`)).code).toBe(250);
    smtp.write(Array.from({ length: 10_000 }, (_, i) => `RCPT TO:<r${i}@dest.test>\r\n`).join(''));
    const replies: Reply[] = [];
    for (let i = 0; i < 10_000; i++) replies.push(await smtp.read());
    expect(replies.filter((r) => r.code === 250)).toHaveLength(100);
    expect(replies.slice(100).every((r) => r.code === 452 && r.text.startsWith('4.5.3 '))).toBe(true);
    const reply = await smtp.data(`From: ${from}\r\nSubject: many\r\n\r\nhi\r\n`);
    const id = Number(/queued as (\d+)/.exec(reply.text)?.[1]);
    await smtp.quit();
    expect((await env.detail(id)).recipients).toHaveLength(100);
  });

  it('a client vanishing mid-DATA leaves nothing stored, and the next client is served', async () => {
    const env = await submissionEnv(kind);
    const smtp = await authenticated(env.ports.submission, env.ws.apiKey);
    expect((await smtp.command(`MAIL FROM:<${from}>`)).code).toBe(250);
    expect((await smtp.command('RCPT TO:<gone@dest.test>')).code).toBe(250);
    expect((await smtp.command('DATA')).code).toBe(354);
    smtp.write(`From: ${from}\r\nSubject: half\r\n\r\n${'half a message\r\n'.repeat(5000)}`);
    smtp.destroy();
    await smtp.closed;
    expect(queuedId((await goodSend(env, 'next')).response)).toBeGreaterThan(0);
    const rows = await env.server.services.db('recipients').select('address');
    expect(rows.map((r: { address: string }) => r.address)).toStrictEqual(['ok@dest.test']);
  });

  it('an address past its connection limit gets 421 4.7.0 at the greeting; a closed connection frees its slot', async () => {
    const env = await submissionEnv(kind);
    const listeners = await listenersOn(env, { maxConnectionsPerIp: 3 });
    const held = await Promise.all([1, 2, 3].map(() => RawSmtp.connect(listeners.ports.submission)));
    expect(held.map((c) => c.greeting.code)).toStrictEqual([220, 220, 220]);
    const fourth = await RawSmtp.connect(listeners.ports.submission);
    expect(fourth.greeting).toMatchObject({ code: 421 });
    expect(fourth.greeting.text).toMatch(/^4\.7\.0 Too many connections/);
    await fourth.closed;
    await held[0]!.quit();
    await held[0]!.closed;
    // The server releases the slot when it sees the close, which may be just after our side does.
    let again = await RawSmtp.connect(listeners.ports.submission);
    for (let tries = 0; again.greeting.code === 421 && tries < 20; tries++) {
      await again.closed;
      again = await RawSmtp.connect(listeners.ports.submission);
    }
    expect(again.greeting.code).toBe(220);
    for (const c of [...held.slice(1), again]) await c.quit();
  });

  it('an idle connection is closed with 421 after the socket timeout', async () => {
    const env = await submissionEnv(kind);
    const listeners = await listenersOn(env, { socketTimeoutMs: 1000 });
    const idle = await RawSmtp.connect(listeners.ports.submission);
    const authIdle = await authenticated(listeners.ports.submission, env.ws.apiKey);
    const [plain, authed] = await Promise.all([repliesUntilClosed(idle), repliesUntilClosed(authIdle)]);
    expect(plain.at(-1)!.code).toBe(421);
    expect(authed.at(-1)!.code).toBe(421);
  });
});
