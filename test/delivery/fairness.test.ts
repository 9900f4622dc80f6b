import { describe, expect, it } from 'vitest';
import { createRenderStep } from '../../src/delivery/render.ts';
import { domainsRepo } from '../../src/store/domains.ts';
import { deliveryEnv, FROM_DOMAIN } from './env.ts';

/** A heavy but accepted newsletter: thousands of links (under the default cap), ~100 bytes each. */
function heavyHtml(links: number): string {
  const items = Array.from({ length: links }, (_, i) => `<p><a href="https://shop.example/item/${i}?utm_source=newsletter&amp;utm_medium=email">Item ${i}</a></p>\n`);
  return `<html><body>${items.join('')}</body></html>`;
}

describe("one workspace's heavy mail does not hold up another's", () => {
  it("B's one-line message, sent while A's tracked 4,000-link message to 20 recipients is being rendered, arrives before A's copies are done", async () => {
    // A's recipients fill every slot of the worker, as 50 recipients fill the default 50.
    const env = await deliveryEnv('sqlite', { delivery: { concurrency: 20 } });
    env.mx('dest.test');
    const { db, tenancy } = env.server.services;
    const a = (await domainsRepo.byName(db, FROM_DOMAIN))!;
    await domainsRepo.update(db, a.id, { open_tracking: true, click_tracking: true });
    const b = await env.server.workspace('other-tenant');
    await tenancy.setLimits('other-tenant', { perMinute: 100_000, perHour: 1_000_000 });
    await env.server.verifiedDomain(b.id, 'beta.test');

    const render = createRenderStep({ tokens: env.server.services.tokens, baseUrl: env.server.url });
    const worker = env.worker({ render, pollMs: 50 });
    worker.start();

    // A's message is taken by the running worker; B sends right after.
    const heavy = await env.send({ to: Array.from({ length: 20 }, (_, i) => `a${i}@dest.test`), html: heavyHtml(4000) });
    const res = await env.server.api('POST', '/emails', {
      key: b.apiKey,
      body: { from: 'hello@beta.test', to: 'b@dest.test', subject: 'Ping', text: 'One line.' },
    });
    expect(res.status).toBe(201);

    const all = await env.sink.waitForMessages(21);
    const order = all.map((m) => m.to[0]);
    const bAt = order.indexOf('b@dest.test');
    const aCopies = order.filter((to) => to !== 'b@dest.test');
    expect(aCopies).toHaveLength(20);
    // B is not queued behind A's copies: most of them arrive after it.
    expect(bAt).toBeLessThan(10);
    await worker.stop();
    expect((await env.detail(heavy)).status).toBe('delivered');
  }, 60_000);
});
