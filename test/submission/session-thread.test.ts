import { readdirSync, readFileSync } from 'node:fs';
import nodemailer from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { FROM_DOMAIN } from '../delivery/env.ts';
import { recordingLog } from '../helpers/recording-log.ts';
import { STORES } from '../helpers/stores.ts';
import { RawSmtp } from '../inbound/smtp-client.ts';
import { listenersOn, queuedId, submissionEnv, type SubmissionEnv } from './env.ts';

const from = `shop@${FROM_DOMAIN}`;
const countMessages = async (env: SubmissionEnv) => Number((await env.server.services.db('messages').count({ n: '*' }))[0]!.n);

async function inData(port: number, key: string): Promise<RawSmtp> {
  const smtp = await RawSmtp.connect(port);
  await smtp.command('EHLO client.test');
  expect((await smtp.command(`AUTH PLAIN ${Buffer.from(`\0app\0${key}`).toString('base64')}`)).code).toBe(235);
  expect((await smtp.command(`MAIL FROM:<${from}>`)).code).toBe(250);
  expect((await smtp.command('RCPT TO:<a@dest.test>')).code).toBe(250);
  expect((await smtp.command('DATA')).code).toBe(354);
  smtp.write(`From: ${from}\r\nSubject: half\r\n\r\n${'half a message\r\n'.repeat(100)}`);
  return smtp;
}

const send = (port: number, key: string, subject: string) =>
  nodemailer
    .createTransport({ host: '127.0.0.1', port, secure: false, requireTLS: true, tls: { rejectUnauthorized: false }, auth: { user: 'app', pass: key } })
    .sendMail({ envelope: { from, to: ['ok@dest.test'] }, raw: Buffer.from(`From: ${from}\r\nSubject: ${subject}\r\n\r\nfine\r\n`) });

describe.each(STORES)('SMTP submission sessions on their own thread (%s)', (kind) => {
  it('a session thread that dies drops its sessions unanswered and stores nothing; it is back on the same ports for the next message', async () => {
    const env = await submissionEnv(kind);
    const recorded = recordingLog();
    const listeners = await listenersOn(env, {}, recorded.log);
    const smtp = await inData(listeners.ports.submission, env.ws.apiKey);

    await listeners.recycle();
    await smtp.closed;
    expect(await countMessages(env)).toBe(0);
    expect(recorded.lines.filter((l) => l.level === 'error').map((l) => l.msg)).toStrictEqual(['the submission session thread exited (code 1); starting it again']);

    const info = await send(listeners.ports.submission, env.ws.apiKey, 'after the restart');
    expect(queuedId(info.response)).toBeGreaterThan(0);
    expect(await countMessages(env)).toBe(1);
  });

  it("the sessions' log lines come out of the process's log, with the client's address", async () => {
    const env = await submissionEnv(kind);
    const recorded = recordingLog();
    const listeners = await listenersOn(env, {}, recorded.log);
    const smtp = await inData(listeners.ports.submission, env.ws.apiKey);
    smtp.destroy();

    const line = await recorded.next((l) => l.msg === 'client left during DATA');
    expect(line).toMatchObject({ level: 'info', fields: { role: 'submission', phase: 'data', ip: '127.0.0.1' } });
    expect(line.fields.session).toEqual(expect.any(String));
    expect(await countMessages(env)).toBe(0);
  });

  it('names its thread mailsvc-smtp-in, as top -H and ps -L show it', async () => {
    await submissionEnv(kind);
    const names = readdirSync('/proc/self/task').map((tid) => readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim());
    expect(names).toContain('mailsvc-smtp-in');
  });
});
