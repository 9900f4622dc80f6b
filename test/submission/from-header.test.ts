import { describe, expect, it } from 'vitest';
import { FROM_DOMAIN } from '../delivery/env.ts';
import { readSubmission } from '../../src/submission/message.ts';
import { queuedId, refusal, submissionEnv, type SubmissionEnv } from './env.ts';

const from = `hello@${FROM_DOMAIN}`;
const countMessages = async (env: SubmissionEnv) => Number((await env.server.services.db('messages').count({ n: '*' }))[0]!.n);

async function send(env: SubmissionEnv, headers: string[]) {
  const raw = Buffer.from([...headers, 'To: a@dest.test', 'Subject: s', '', 'Hello', ''].join('\r\n'));
  return env.client().sendMail({ envelope: { from, to: ['a@dest.test'] }, raw });
}

/** From values that name a second mailbox besides the key's own, each once as the issue found them. */
const SMUGGLED_FROM = [
  `${from}, ceo@bank.example`,
  `<${from}>, <ceo@bank.example>`,
  `${from};ceo@bank.example`,
  `${from},\r\n ceo@bank.example`,
  `Staff: ${from}, ceo@bank.example;`,
  `Staff: ${from};`,
  `${from} (ceo@bank.example)`,
  `ceo@bank.example (${from})`,
  `"Hello" <${from}> <ceo@bank.example>`,
];

describe('From and Sender of a submitted message', () => {
  it('refuses a From that holds more than one mailbox, a group or a comment with 550 naming the field; nothing is stored', async () => {
    const env = await submissionEnv('sqlite');
    for (const value of SMUGGLED_FROM) {
      const refused = await refusal(send(env, [`From: ${value}`]));
      expect({ value, code: refused.code }).toStrictEqual({ value, code: 550 });
      expect(refused.response).toMatch(/From header field must hold exactly one mailbox/);
    }
    expect(await countMessages(env)).toBe(0);
  });

  it('refuses a Sender of another domain or with two mailboxes, and takes one on the key’s domain', async () => {
    const env = await submissionEnv('sqlite');
    const foreign = await refusal(send(env, [`From: ${from}`, 'Sender: ceo@bank.example']));
    expect(foreign.code).toBe(550);
    expect(foreign.response).toMatch(/^550 5\.7\.1 Sender domain bank\.example not allowed/);
    const two = await refusal(send(env, [`From: ${from}`, `Sender: ${from}, ceo@bank.example`]));
    expect(two.code).toBe(550);
    expect(two.response).toMatch(/Sender header field must hold exactly one mailbox/);
    expect(await countMessages(env)).toBe(0);
    const ok = await send(env, [`From: ${from}`, `Sender: Desk <desk@${FROM_DOMAIN}>`]);
    expect(queuedId(ok.response)).toBeGreaterThan(0);
  });

  it('still takes one mailbox written the usual ways: bare, with a name, a quoted name with a comma, an encoded name, folded', async () => {
    const env = await submissionEnv('sqlite');
    for (const value of [from, `Hello <${from}>`, `"Doe, John" <${from}>`, `=?UTF-8?Q?Gr=C3=BC=C3=9Fe?= <${from}>`, `"Hello"\r\n <${from}>`]) {
      const info = await send(env, [`From: ${value}`]);
      expect(queuedId(info.response)).toBeGreaterThan(0);
    }
    expect(await countMessages(env)).toBe(5);
  });

  it('reads a From of 200 KB of commas and angle brackets in linear time', async () => {
    const timed = async (n: number) => {
      const raw = Buffer.from(`From: ${'<a@b.test>,'.repeat(n)}${from}\r\nTo: a@dest.test\r\n\r\nx\r\n`, 'latin1');
      const started = performance.now();
      await expect(readSubmission(raw, [], 0)).rejects.toThrow(/exactly one mailbox/);
      return performance.now() - started;
    };
    await timed(2000);
    const small = await timed(2000);
    // Ten times the input: about ten times the time when linear, a hundred when quadratic.
    expect(await timed(20_000)).toBeLessThan(small * 30 + 100);
  });
});
