import { describe, expect, it } from 'vitest';
import { STORES } from '../helpers/stores.ts';
import { deliveryEnv } from './env.ts';

describe.each(STORES)('delivery of held mail (%s)', (kind) => {
  it('sends nothing a hold covers, mail accepted after it included, and sends it all once released', { timeout: 30_000 }, async () => {
    const env = await deliveryEnv(kind);
    env.mx('dest.test');
    env.mx('free.test');
    const control = (action: string, body: unknown) => env.server.api('POST', `/queue/${action}`, { key: env.ws.apiKey, body });
    const before = await env.send({ to: 'a@dest.test' });
    expect((await control('hold', { domain: 'dest.test' })).body).toStrictEqual({ affected: 1 });
    const after = await env.send({ to: ['b@dest.test', 'c@free.test'] });
    const worker = env.worker();
    expect(await worker.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
    expect(env.sink.messages.map((m) => m.to)).toStrictEqual([['c@free.test']]);
    expect((await env.detail(before)).status).toBe('held');
    expect((await env.detail(after)).recipients.map((r: { status: string }) => r.status)).toStrictEqual(['held', 'delivered']);

    expect((await control('release', { domain: 'dest.test' })).body).toStrictEqual({ affected: 2 });
    expect(await worker.runOnce()).toMatchObject({ claimed: 2, delivered: 2 });
    expect([(await env.detail(before)).status, (await env.detail(after)).status]).toStrictEqual(['delivered', 'delivered']);
  });
});
