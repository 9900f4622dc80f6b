import { describe, expect, it } from 'vitest';
import { pruneRetained } from '../../src/retention/messages.ts';
import { inboundRepo } from '../../src/store/inbound.ts';
import { ManualClock } from '../helpers/clock.ts';
import { STORES } from '../helpers/stores.ts';
import { deliveryEnv } from './env.ts';

const DAY = 86_400_000;

describe.each(STORES)('retention of delivered mail (%s)', (kind) => {
  it('drops bodies and events of finished messages older than retention.days, never the body of one still queued', async () => {
    const clock = new ManualClock('2026-11-21T10:00:00.000Z');
    const env = await deliveryEnv(kind, { clock });
    env.mx('dest.test');
    env.sink.script('stuck@dest.test', Array(5).fill({ rcpt: { reply: { code: 451, message: '4.2.0 Try later' } } }));
    const old = await env.send({ to: 'old@dest.test' });
    const stuck = await env.send({ to: 'stuck@dest.test' });
    const worker = env.worker();
    await worker.runOnce();
    clock.advance(2 * DAY);
    const young = await env.send({ to: 'young@dest.test' });
    await worker.runOnce();
    expect((await env.detail(old)).events).toHaveLength(1);

    const { db } = env.server.services;
    const report = (at: number, rcpt: string) =>
      inboundRepo.insert(db, {
        received_at: at,
        rcpt,
        mail_from: '',
        remote_ip: '127.0.0.1',
        helo: null,
        size: 4,
        truncated: false,
        sha256: rcpt,
        kind: 'unknown',
        feedback_type: null,
        proof: null,
        workspace_id: null,
        email_id: null,
        recipient_id: null,
        outcome: 'uncorrelated',
        effect: 'none',
        raw: Buffer.from('test'),
      });
    await report(clock.now() - 2 * DAY, 'postmaster@old.test');
    await report(clock.now(), 'postmaster@young.test');

    clock.advance(29 * DAY);
    expect(await pruneRetained(db, clock.now(), env.server.config.retention.days)).toStrictEqual({
      messageBodies: 1,
      events: 1,
      inboundReports: 1,
      inboundMessages: 0,
      sandboxCaptures: 0,
    });
    expect((await db('inbound_reports').select('rcpt')).map((r: { rcpt: string }) => r.rcpt)).toStrictEqual(['postmaster@young.test']);
    const content = async (id: number) => (await db('message_contents').where({ message_id: id }).first())?.content ?? null;
    expect(await content(old)).toBeNull();
    expect((await env.detail(stuck)).status).toBe('deferred');
    expect(await content(stuck)).not.toBeNull();
    expect(await content(young)).not.toBeNull();

    // The history stays readable: status, recipients, subject; the events are gone.
    const detail = await env.detail(old);
    expect(detail).toMatchObject({ status: 'delivered', subject: 'Hello', recipients: [{ address: 'old@dest.test', status: 'delivered' }], events: [] });
    expect((await env.detail(young)).events).toHaveLength(1);
  });
});
