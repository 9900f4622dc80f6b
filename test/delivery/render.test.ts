import { describe, expect, it } from 'vitest';
import type { RenderContext, RenderStep } from '../../src/delivery/render.ts';
import { domainsRepo } from '../../src/store/domains.ts';
import { ManualClock } from '../helpers/clock.ts';
import { STORES } from '../helpers/stores.ts';
import { mailauthVerdict } from './dkim-check.ts';
import { deliveryEnv, FROM_DOMAIN } from './env.ts';

const T0 = Date.parse('2026-11-21T10:00:00.000Z');

async function signatures(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^mailsvc_delivery_dkim_signatures_total (\d+)$/m.exec(text)?.[1]);
}

describe.each(STORES)('the per-recipient render step (%s)', (kind) => {
  it("gets the domain's tracking switches, the recipient and the stream, and what it returns is sent, signed", async () => {
    const env = await deliveryEnv(kind);
    env.mx('dest.test');
    const { db } = env.server.services;
    const domain = (await domainsRepo.byName(db, FROM_DOMAIN))!;
    await domainsRepo.update(db, domain.id, { open_tracking: true });
    const seen: RenderContext[] = [];
    const render: RenderStep = (prepared, ctx) => {
      seen.push(ctx);
      return {
        html: `${prepared.html}<img src="https://t.example/o/${ctx.recipient.id}">`,
        headers: { 'List-Unsubscribe': `<https://t.example/u/${ctx.recipient.id}>` },
      };
    };
    const id = await env.send({ to: ['one@dest.test', 'two@dest.test'], html: '<p>Hi</p>', stream: 'broadcast' });
    expect(await env.worker({ render }).runOnce()).toMatchObject({ delivered: 2 });

    const recipients = (await env.detail(id)).recipients as { address: string }[];
    const ids = (await db('recipients').where({ message_id: id }).orderBy('id')).map((r: { id: number }) => r.id);
    expect(seen.sort((a, b) => a.recipient.id - b.recipient.id)).toStrictEqual(
      recipients.map((r, i) => ({
        tracking: { open: true, click: false },
        recipient: { id: ids[i], address: r.address },
        stream: 'broadcast',
        returnPathDomain: 'bounces.mail.mailsvc.test',
      })),
    );
    for (const [i, address] of ['one@dest.test', 'two@dest.test'].entries()) {
      const copy = env.sink.messages.find((m) => m.to[0] === address)!;
      const text = copy.raw.toString('latin1');
      expect(text).toContain(`List-Unsubscribe: <https://t.example/u/${ids[i]}>`);
      expect(text).toContain(`https://t.example/o/${ids[i]}`);
      expect(await mailauthVerdict(copy.raw, env.dns.address)).toStrictEqual(['pass']);
    }
  });

  it('neither renders nor signs a copy whose destination does not resolve, on any retry', async () => {
    const clock = new ManualClock(T0);
    const env = await deliveryEnv(kind, { clock, random: () => 0.5 });
    env.dns.servfail('dest.test');
    let renders = 0;
    const worker = env.worker({ render: () => (renders++, {}) });
    const id = await env.send({ to: 'one@dest.test' });

    expect(await worker.runOnce()).toMatchObject({ claimed: 1, deferred: 1 });
    const due = (await env.server.services.db('recipients').where({ message_id: id }).first()).due_at;
    clock.set(Number(due));
    expect(await worker.runOnce()).toMatchObject({ claimed: 1, deferred: 1 });
    expect((await env.detail(id)).recipients[0]).toMatchObject({ status: 'deferred', attempts: 2 });
    expect([renders, await signatures(env.server.url)]).toStrictEqual([0, 0]);

    // Once it resolves, the copy is rendered and signed once.
    env.dns.clear('dest.test');
    env.mx('dest.test');
    clock.set(Number((await env.server.services.db('recipients').where({ message_id: id }).first()).due_at));
    expect(await worker.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
    expect([renders, await signatures(env.server.url)]).toStrictEqual([1, 1]);
    expect(env.sink.messages).toHaveLength(1);
  });
});
