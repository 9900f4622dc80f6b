import { describe, expect, it } from 'vitest';
import { createRenderStep } from '../../src/delivery/render.ts';
import { domainsRepo } from '../../src/store/domains.ts';
import { deliveryEnv, FROM_DOMAIN } from '../delivery/env.ts';
import { submissionEnv, queuedId } from '../submission/env.ts';

const link = (i: number) => `<p><a href="https://shop.example/item/${i}">item ${i}</a></p>\n`;
/** Links the rewriter leaves alone: not http(s), marked, or already ours. */
const untracked = (base: string) =>
  `<a href="mailto:help@acme.test">mail</a><a href="#top">top</a><a data-mailsvc-notrack href="https://keep.example/">kept</a>` +
  `<a href="${base}/t/u/abc">unsubscribe</a><a name="anchor">no href</a>`;
const html = (links: number, extra = '') => `<html><body>${extra}${Array.from({ length: links }, (_, i) => link(i)).join('')}</body></html>`;

describe('caps on what one message costs to render', () => {
  it('POST /emails: a message at the tracked-link cap is accepted, one more link is refused with 422 naming the cap', async () => {
    const env = await deliveryEnv('sqlite', { config: { tracking: { maxLinksPerMessage: 300 } } });
    const base = env.server.config.tracking.baseUrl;
    const send = (body: string) =>
      env.server.api('POST', '/emails', { key: env.ws.apiKey, body: { from: `news@${FROM_DOMAIN}`, to: 'one@dest.test', subject: 'Hi', html: body } });

    // Counted as the rewriter counts: the untracked links around the 300 do not count.
    const atCap = await send(html(300, untracked(base)));
    expect(atCap.status).toBe(201);

    const over = await send(html(301));
    expect(over.status).toBe(422);
    expect(over.body.error).toBe('Field `html` has more than 300 links that click tracking would rewrite; at most 300 tracked links per message');
    // Nothing was stored for the refused message.
    expect((await env.server.api('GET', '/emails', { key: env.ws.apiKey })).body.data).toHaveLength(1);
  });

  it('the count is exactly the number of links the delivery render step rewrites', async () => {
    const env = await deliveryEnv('sqlite', { config: { tracking: { maxLinksPerMessage: 40 } } });
    const base = env.server.config.tracking.baseUrl;
    const body = html(40, untracked(base) + `<A HREF=" https://caps.example/ ">caps</A><a href='http://single.example/?a=1&amp;b=2'>q</a>`);
    // 42 tracked links: refused at 40, accepted at 42.
    const refused = await env.server.api('POST', '/emails', {
      key: env.ws.apiKey,
      body: { from: `news@${FROM_DOMAIN}`, to: 'one@dest.test', subject: 'Hi', html: body },
    });
    expect(refused.status).toBe(422);

    const render = createRenderStep({ tokens: env.server.services.tokens, baseUrl: base });
    const own = await render(
      { html: body, text: null },
      { tracking: { open: false, click: true }, recipient: { id: 7, address: 'one@dest.test' }, stream: 'transactional', returnPathDomain: 'x' },
    );
    expect(own.html!.split(`${base}/t/c/`).length - 1).toBe(42);
  });

  it('a message whose rendered copy could pass tracking.maxRenderedBytes is refused with 422 naming the cap', async () => {
    const env = await deliveryEnv('sqlite', { config: { tracking: { maxRenderedBytes: 200_000 } } });
    const send = (body: string) =>
      env.server.api('POST', '/emails', { key: env.ws.apiKey, body: { from: `news@${FROM_DOMAIN}`, to: 'one@dest.test', subject: 'Hi', html: body } });
    // 1,500 links of ~60 bytes: ~90 KB as written, over 200 KB once each carries a signed token.
    const body = html(1500);
    expect(body.length).toBeLessThan(100_000);
    const res = await send(body);
    expect(res.status).toBe(422);
    expect(res.body.error).toMatch(/^Message too large once rendered: .*at most 200000 rendered bytes per message$/);
    // The same links rendered for real are indeed over the cap.
    const render = createRenderStep({ tokens: env.server.services.tokens, baseUrl: env.server.config.tracking.baseUrl });
    const own = await render(
      { html: body, text: null },
      { tracking: { open: true, click: true }, recipient: { id: 1, address: 'one@dest.test' }, stream: 'transactional', returnPathDomain: 'x' },
    );
    expect(Buffer.byteLength(own.html!)).toBeGreaterThan(200_000);
    expect((await send(html(300))).status).toBe(201);
  });

  it('a message accepted without being parsed still renders within the cap, hostile attributes and long multibyte links included', async () => {
    // Small enough that the HTML is not parsed (its `<a` count and 12 times its length fit),
    // yet built to grow the most when rendered: quotes re-escaped, multibyte links in tokens.
    const maxRenderedBytes = 40_000;
    const env = await deliveryEnv('sqlite', { config: { tracking: { maxRenderedBytes } } });
    const tag = `<a title='${'"'.repeat(40)}' href="https://é.example/${'ü'.repeat(40)}">x</a>`;
    const body = `<p>${tag.repeat(12)}</p>`;
    const res = await env.server.api('POST', '/emails', {
      key: env.ws.apiKey,
      body: { from: `news@${FROM_DOMAIN}`, to: 'one@dest.test', subject: 'Hi', html: body },
    });
    expect(res.status).toBe(201);
    const render = createRenderStep({ tokens: env.server.services.tokens, baseUrl: env.server.config.tracking.baseUrl });
    const own = await render(
      { html: body, text: null },
      { tracking: { open: true, click: true }, recipient: { id: Number.MAX_SAFE_INTEGER, address: 'one@dest.test' }, stream: 'transactional', returnPathDomain: 'x' },
    );
    expect(own.html!.split('&quot;').length - 1).toBe(12 * 40);
    expect(Buffer.byteLength(own.html!)).toBeLessThanOrEqual(maxRenderedBytes);
    expect(Buffer.byteLength(own.html!)).toBeGreaterThan(3 * Buffer.byteLength(body));
  });

  it('the caps hold with tracking off too: the switch may be on by the time the message is sent', async () => {
    const env = await deliveryEnv('sqlite', { config: { tracking: { maxLinksPerMessage: 10 } } });
    const { db } = env.server.services;
    const domain = (await domainsRepo.byName(db, FROM_DOMAIN))!;
    await domainsRepo.update(db, domain.id, { open_tracking: false, click_tracking: false });
    const res = await env.server.api('POST', '/emails', {
      key: env.ws.apiKey,
      body: { from: `news@${FROM_DOMAIN}`, to: 'one@dest.test', subject: 'Hi', html: html(11) },
    });
    expect(res.status).toBe(422);
    expect(res.body.error).toContain('at most 10 tracked links per message');
  });

  it('SMTP submission: submitted MIME is sent as submitted, never rendered, so its links are not capped', async () => {
    const env = await submissionEnv('sqlite', { config: { tracking: { maxLinksPerMessage: 10 } } });
    const info = await env.client().sendMail({ from: `news@${FROM_DOMAIN}`, to: 'one@dest.test', subject: 'Hi', html: html(50) });
    expect(queuedId(info.response)).toBeGreaterThan(0);
  });
});
