import { describe, expect, it, onTestFinished } from 'vitest';
import { loadConfig } from '../../src/config/load.ts';
import { recordEvent } from '../../src/events/record.ts';
import { createLogger } from '../../src/log/logger.ts';
import { createServices } from '../../src/services.ts';
import { messageWith } from '../helpers/db.ts';
import { startTestDns } from '../helpers/dns-server.ts';
import { spawnServe } from '../helpers/process.ts';
import { STORES } from '../helpers/stores.ts';
import { crashConfigFile } from '../helpers/crash.ts';
import { signatureValid, startReceiver } from './receiver.ts';
import { until } from './world.ts';

describe.each(STORES)('webhook crash safety (%s)', (kind) => {
  it('SIGKILL between recording an event and its POST loses nothing: after a restart it is POSTed, once', { timeout: 120_000 }, async () => {
    const dns = await startTestDns();
    onTestFinished(() => dns.close());
    const receiver = await startReceiver();
    const port = new URL(receiver.url).port;
    // The dispatcher's lookup of the receiver never gets an answer: the process is killed while
    // the event is recorded and claimed but not yet POSTed.
    dns.drop('hooks.crash.test');

    const configFile = await crashConfigFile(kind, {
      dns: { servers: [dns.address], timeout: 5 },
      delivery: { leaseSeconds: 2 },
      webhooks: { allowPrivateAddresses: true },
    });
    const services = await createServices(loadConfig({ file: configFile, env: {} }), { log: createLogger('silent') });
    onTestFinished(() => services.close());
    const { db } = services;
    const { workspaceId, messageId } = await messageWith(db, ['delivered'], Date.now());
    const hook = await services.webhooks.create(workspaceId, { url: `http://hooks.crash.test:${port}/hook` });

    const first = await spawnServe(configFile, ['--roles', 'api,webhooks']);
    const payload = await db.transaction((tx) =>
      recordEvent(tx, {
        workspaceId,
        emailId: messageId,
        recipientId: null,
        event: 'email.delivered',
        recipient: 'r0@example.org',
        provider: { response: '250 2.0.0 Ok', reporting_mta: 'mx.example.org' },
        at: Date.now(),
      }),
    );
    await until(async () => dns.queries.some((q) => q.name === 'hooks.crash.test'), 'the dispatcher looking the receiver up', 30_000);
    await first.kill();
    expect(receiver.requests).toHaveLength(0);
    expect(await db('webhook_deliveries').where({ endpoint_id: hook.id }).pluck('status')).toStrictEqual(['pending']);

    dns.clear('hooks.crash.test');
    dns.set('hooks.crash.test', 'A', '127.0.0.1');
    await spawnServe(configFile, ['--roles', 'api,webhooks']);
    const [req] = await receiver.waitFor(1, 60_000);
    expect(req.raw.toString()).toBe(JSON.stringify(payload));
    expect(signatureValid(req, hook.secret)).toBe(true);
    const log = await until(
      async () => {
        const entries = await services.webhooks.attempts(workspaceId, hook.id, { limit: 10 });
        return entries.length > 0 && entries;
      },
      'the attempt logged',
      30_000,
    );
    expect(log.map((e) => [e.attempt, e.response_code])).toStrictEqual([[1, 200]]);
    expect(await db('webhook_deliveries').where({ endpoint_id: hook.id }).pluck('status')).toStrictEqual(['delivered']);
    expect(receiver.requests).toHaveLength(1);
  });
});
