import { describe, expect, it } from 'vitest';
import { oneJson, runCli } from '../helpers/cli.ts';
import { deliveryEnv } from './env.ts';

describe('mailsvc send and mailsvc queue', () => {
  it('queues a test message, shows it by status and destination, and retries a deferred one now', { timeout: 30_000 }, async () => {
    const env = await deliveryEnv('sqlite');
    env.mx('dest.test');
    env.sink.script('ops@dest.test', [{ rcpt: { reply: { code: 451, message: '4.3.0 Temporary lookup failure' } } }]);
    const cli = (...args: string[]) => runCli(['--config', env.server.configFile, ...args]);

    const sent = oneJson(await cli('send', '--from', 'Ops <ops@acme.test>', '--to', 'ops@dest.test', '--json'));
    expect(sent).toMatchObject({ id: expect.any(Number), stream: 'transactional', recipients: [{ address: 'ops@dest.test', status: 'queued' }] });
    const worker = env.worker();
    expect(await worker.runOnce()).toMatchObject({ deferred: 1 });
    const [listed, stats, none] = await Promise.all([
      cli('queue', 'list', '--status', 'deferred', '--json').then(oneJson),
      cli('queue', 'stats', '--json').then(oneJson),
      cli('queue', 'retry'),
    ]);
    expect(listed).toMatchObject([
      { email_id: sent.id, address: 'ops@dest.test', status: 'deferred', attempts: 1, last_mx: 'mx.dest.test', last_response: '451 4.3.0 Temporary lookup failure' },
    ]);
    expect(Date.parse(listed[0].due_at) - Date.now()).toBeGreaterThan(30_000);
    expect(stats.by_status).toStrictEqual({ deferred: 1 });
    expect(stats.by_destination).toStrictEqual([{ domain: 'dest.test', status: 'deferred', count: 1 }]);
    expect(stats.oldest_deferred).toMatchObject({ email_id: sent.id, address: 'ops@dest.test', attempts: 1, next_attempt_at: listed[0].due_at });
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(/Name message ids or a --domain/);

    // Not due for another minute: nothing to do until the operator says retry.
    expect(await worker.runOnce()).toMatchObject({ claimed: 0 });
    expect(oneJson(await cli('queue', 'retry', '--domain', 'dest.test', '--json'))).toStrictEqual({ retried: 1 });
    expect(await worker.runOnce()).toMatchObject({ delivered: 1 });
    expect(env.sink.messages[0]!.raw.toString()).toContain('A test message from mailsvc');
    expect((await env.detail(sent.id)).status).toBe('delivered');
  });
});
