import { describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.ts';
import { deliveryEnv } from './env.ts';

describe.each(STORES)('synchronous 5xx replies (%s)', (kind) => {
  it('bounce at once with the classifier’s type; only a permanent bounce suppresses, and nothing is retried', async () => {
    const env = await deliveryEnv(kind);
    env.mx('dest.test');
    const unknown = '550 5.1.1 <gone@dest.test>: Recipient address rejected: User unknown in local recipient table';
    env.sink.script('gone@dest.test', [
      { rcpt: { reply: { code: 550, message: '5.1.1 <gone@dest.test>: Recipient address rejected: User unknown in local recipient table' } } },
    ]);
    env.sink.script('spam@dest.test', [{ data: { reply: { code: 554, message: '5.7.1 Message rejected as spam by Content Filtering' } } }]);
    env.sink.script('full@dest.test', [{ rcpt: { reply: { code: 552, message: '5.2.2 <full@dest.test>: Mailbox full' } } }]);

    const id = await env.send({ to: ['gone@dest.test', 'spam@dest.test', 'full@dest.test'] });
    const worker = env.worker();
    expect(await worker.runOnce()).toMatchObject({ claimed: 3, bounced: 3 });

    const detail = await env.detail(id);
    expect(detail.status).toBe('bounced');
    for (const r of detail.recipients) expect(r).toMatchObject({ status: 'bounced', attempts: 1 });
    const bounces = Object.fromEntries(detail.events.map((e: { recipient: string }) => [e.recipient, e]));
    expect(detail.events).toHaveLength(3);
    expect(bounces['gone@dest.test']).toMatchObject({
      event: 'email.bounced',
      bounce_type: 'permanent',
      provider: { response: unknown, reporting_mta: 'mx.dest.test', status: '5.1.1', smtp_code: 550 },
    });
    expect(bounces['spam@dest.test']).toMatchObject({ bounce_type: 'blocked', provider: { status: '5.7.1', smtp_code: 554 } });
    expect(bounces['spam@dest.test'].provider.response).toContain('rejected as spam');
    expect(bounces['full@dest.test']).toMatchObject({ bounce_type: 'transient', provider: { status: '5.2.2', smtp_code: 552 } });

    // Suppressed in the message's stream only, and only the permanent one.
    const suppressed = async (stream: string, address: string) => (await env.server.api('GET', `/suppressions/${stream}/${address}`, { key: env.ws.apiKey })).status;
    expect(await suppressed('transactional', 'gone@dest.test')).toBe(200);
    expect(await suppressed('broadcast', 'gone@dest.test')).toBe(404);
    expect(await suppressed('transactional', 'spam@dest.test')).toBe(404);
    expect(await suppressed('transactional', 'full@dest.test')).toBe(404);

    // Final: nothing comes back to the queue, however late it gets.
    expect(await worker.runOnce()).toMatchObject({ claimed: 0 });
    expect(env.sink.messages).toHaveLength(0);
    const next = await env.send({ to: 'gone@dest.test' });
    expect((await env.detail(next)).status).toBe('suppressed');
  });
});
