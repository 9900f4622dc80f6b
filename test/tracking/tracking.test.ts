import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { createRenderStep } from '../../src/delivery/render.ts';
import { domainsRepo } from '../../src/store/domains.ts';
import { ManualClock } from '../helpers/clock.ts';
import { STORES } from '../helpers/stores.ts';
import { deliveryEnv, FROM_DOMAIN, type DeliveryEnv } from '../delivery/env.ts';

const HTML = `<!doctype html><html><head><title>News</title></head><body>
<p>Read <a href="https://shop.example/item?id=7&amp;ref=mail&amp;amp=1#reviews">the review</a>,
<a class="x" href='http://plain.example/'>plain</a>, <A HREF="https://caps.example/Path?Q=%20a">caps</A>.</p>
<p><a href="mailto:help@acme.test">mail us</a> <a href="tel:+15551234">call</a> <a href="#top">top</a>
<a data-mailsvc-notrack href="https://private.example/keep">kept</a></p>
</body></html>`;
const ORIGINALS = ['https://shop.example/item?id=7&ref=mail&amp=1#reviews', 'http://plain.example/', 'https://caps.example/Path?Q=%20a'];

async function world(kind: (typeof STORES)[number], flags: { open: boolean; click: boolean }, clock = new ManualClock()) {
  // The test speaks as a proxy at 127.0.0.1 that forwards each visitor's address.
  const env = await deliveryEnv(kind, { clock, config: { http: { host: '127.0.0.1', port: 0, trustProxy: ['127.0.0.1'] } } });
  env.mx('dest.test');
  const { db } = env.server.services;
  const domain = (await domainsRepo.byName(db, FROM_DOMAIN))!;
  const setFlags = (f: { open: boolean; click: boolean }) => domainsRepo.update(db, domain.id, { open_tracking: f.open, click_tracking: f.click });
  await setFlags(flags);
  const render = createRenderStep({ tokens: env.server.services.tokens, baseUrl: env.server.url });
  const deliver = async (to: string[], extra: Record<string, unknown> = {}) => {
    const before = env.sink.messages.length;
    const id = await env.send({ to, html: HTML, text: 'Plain text with https://text.example/ left alone', ...extra });
    expect(await env.worker({ render }).runOnce()).toMatchObject({ delivered: to.length });
    return { id, copies: env.sink.messages.slice(before) };
  };
  return { env, clock, setFlags, deliver };
}

const htmlOf = async (raw: Buffer) => String((await simpleParser(raw)).html);
const hrefs = (html: string) => [...html.matchAll(/<a\b[^>]*?\bhref="([^"]*)"/gi)].map((m) => m[1]!.replaceAll('&amp;', '&'));
const pixelOf = (html: string) => /<img src="([^"]+\/t\/o\/[^"]+)"/.exec(html)?.[1];

async function events(env: DeliveryEnv, id: number, name?: string) {
  const rows = await env.server.services.db('events').where({ email_id: id }).orderBy('id');
  return rows
    .map((r: { event: string; recipient_id: number; payload: string }) => ({ event: r.event, recipient_id: r.recipient_id, payload: JSON.parse(r.payload) }))
    .filter((r) => r.event !== 'email.delivered' && (name === undefined || r.event === name));
}

const get = (url: string, ip = '203.0.113.7') => fetch(url, { redirect: 'manual', headers: { 'X-Forwarded-For': ip, 'User-Agent': 'TestMail/1.0' } });

describe.each(STORES)('open and click tracking (%s)', (kind) => {
  it('off: the HTML arrives as submitted, text untouched, and no tracking URL records anything', async () => {
    const { env, deliver } = await world(kind, { open: false, click: false });
    const { id, copies } = await deliver(['one@dest.test']);
    const parsed = await simpleParser(copies[0]!.raw);
    expect(parsed.html).toBe(HTML);
    expect(parsed.text?.trim()).toBe('Plain text with https://text.example/ left alone');

    // Tokens minted for this recipient still verify: the pixel is served and the link redirects, silently.
    const { tokens } = env.server.services;
    const recipientId = (await env.server.services.db('recipients').where({ message_id: id }).first()).id;
    const pixel = await get(`${env.server.url}/t/o/${tokens.open.signId(recipientId)}`);
    expect(pixel.status).toBe(200);
    const render = createRenderStep({ tokens, baseUrl: env.server.url });
    const tracked = (
      await render(await preparedFor(env, id), {
        tracking: { open: true, click: true },
        recipient: { id: recipientId, address: 'one@dest.test' },
        stream: 'transactional',
        returnPathDomain: 'x.test',
      })
    ).html!;
    const click = await get(hrefs(tracked)[0]!);
    expect([click.status, click.headers.get('location')]).toStrictEqual([302, ORIGINALS[0]]);
    expect(await events(env, id)).toStrictEqual([]);
  });

  it('click tracking: each http(s) link goes through /t/c/ to the exact original with one email.clicked; others untouched', async () => {
    const { env, deliver } = await world(kind, { open: false, click: true });
    const { id, copies } = await deliver(['one@dest.test']);
    const html = await htmlOf(copies[0]!.raw);
    const links = hrefs(html);
    expect(links.slice(0, 3).every((l) => l.startsWith(`${env.server.url}/t/c/`))).toBe(true);
    expect(links.slice(3)).toStrictEqual(['mailto:help@acme.test', 'tel:+15551234', '#top', 'https://private.example/keep']);
    expect(html).not.toContain('data-mailsvc-notrack');
    expect(html).not.toContain('/t/o/');
    expect(html).toContain('<a href="mailto:help@acme.test">mail us</a> <a href="tel:+15551234">call</a> <a href="#top">top</a>');

    for (const [i, link] of links.slice(0, 3).entries()) {
      const res = await get(link);
      expect([res.status, res.headers.get('location')]).toStrictEqual([302, ORIGINALS[i]]);
    }
    const clicked = await events(env, id, 'email.clicked');
    expect(clicked.map((e) => [e.payload.recipient, e.payload.url])).toStrictEqual(ORIGINALS.map((u) => ['one@dest.test', u]));
    expect(clicked[0]!.payload.provider).toMatchObject({ ip: '203.0.113.7', user_agent: 'TestMail/1.0' });
  });

  it('open tracking: the pixel is a no-cache 43-byte GIF firing email.opened once per IP within 10 s', async () => {
    const { env, clock, deliver } = await world(kind, { open: true, click: false });
    const { id, copies } = await deliver(['one@dest.test']);
    const html = await htmlOf(copies[0]!.raw);
    expect(hrefs(html)[0]).toBe(ORIGINALS[0]);
    const pixel = pixelOf(html)!;
    expect(html.indexOf(pixel)).toBeLessThan(html.indexOf('</body>'));

    const first = await get(pixel);
    expect([first.status, first.headers.get('content-type'), first.headers.get('cache-control')]).toStrictEqual([
      200,
      'image/gif',
      'no-cache, no-store, must-revalidate, private',
    ]);
    const gif = Buffer.from(await first.arrayBuffer());
    expect([gif.length, gif.toString('latin1', 0, 6)]).toStrictEqual([43, 'GIF89a']);
    clock.advance(9_000);
    expect((await get(pixel)).status).toBe(200);
    expect(await events(env, id, 'email.opened')).toHaveLength(1);
    await get(pixel, '198.51.100.9'); // another IP counts
    clock.advance(2_000);
    await get(pixel); // 11 s after the first: counts again
    expect((await events(env, id, 'email.opened')).map((e) => e.payload.provider.ip)).toStrictEqual(['203.0.113.7', '198.51.100.9', '203.0.113.7']);
  });

  it('turning the flags off stops rewriting for later mail and events for earlier mail, whose links still redirect', async () => {
    const { env, setFlags, deliver } = await world(kind, { open: true, click: true });
    const before = await deliver(['one@dest.test']);
    const html = await htmlOf(before.copies[0]!.raw);
    await setFlags({ open: false, click: false });
    const after = await deliver(['one@dest.test']);
    expect(await htmlOf(after.copies[0]!.raw)).toBe(HTML);

    expect((await get(pixelOf(html)!)).status).toBe(200);
    const res = await get(hrefs(html)[1]!);
    expect([res.status, res.headers.get('location')]).toStrictEqual([302, ORIGINALS[1]]);
    expect(await events(env, before.id)).toStrictEqual([]);
  });

  it('an altered or misused token is a 404, never a redirect', async () => {
    const { env, deliver } = await world(kind, { open: true, click: true });
    const { id, copies } = await deliver(['one@dest.test']);
    const html = await htmlOf(copies[0]!.raw);
    const link = hrefs(html)[0]!;
    const token = link.slice(link.lastIndexOf('/') + 1);
    const pixelToken = pixelOf(html)!.split('/').pop()!;
    const flip = (t: string, at: number) => `${t.slice(0, at)}${t[at] === 'a' ? 'b' : 'a'}${t.slice(at + 1)}`;
    const forged = [flip(token, 0), flip(token, Math.floor(token.length / 2)), flip(token, token.length - 1), token.slice(0, -1), `${token}a`, 'x', '%00'];
    for (const t of forged) {
      const res = await get(`${env.server.url}/t/c/${t}`);
      expect([t, res.status, res.headers.get('location')]).toStrictEqual([t, 404, null]);
    }
    // A token signed for one route is worthless on another.
    expect((await get(`${env.server.url}/t/c/${pixelToken}`)).status).toBe(404);
    expect((await get(`${env.server.url}/t/o/${token}`)).status).toBe(404);
    expect((await get(`${env.server.url}/t/o/${flip(pixelToken, 3)}`)).status).toBe(404);
    expect(await events(env, id)).toStrictEqual([]);
  });

  it('each recipient gets its own tokens: an open or click by one never counts for another', async () => {
    const { env, deliver } = await world(kind, { open: true, click: true });
    const { id, copies } = await deliver(['one@dest.test', 'two@dest.test']);
    const byAddress = Object.fromEntries(await Promise.all(copies.map(async (c) => [c.to[0], await htmlOf(c.raw)] as const)));
    const [one, two] = [byAddress['one@dest.test']!, byAddress['two@dest.test']!];
    expect(pixelOf(one)).not.toBe(pixelOf(two));
    expect(hrefs(one)[0]).not.toBe(hrefs(two)[0]);

    await get(pixelOf(two)!);
    await get(hrefs(one)[2]!);
    const seen = await events(env, id);
    expect(seen.map((e) => [e.event, e.payload.recipient])).toStrictEqual([
      ['email.opened', 'two@dest.test'],
      ['email.clicked', 'one@dest.test'],
    ]);
  });
});

async function preparedFor(env: DeliveryEnv, id: number) {
  const { prepareMessage } = await import('../../src/delivery/compose.ts');
  const { messagesRepo } = await import('../../src/store/messages.ts');
  const row = (await messagesRepo.byId(env.server.services.db, id))!;
  return prepareMessage(row, env.server.services.config.server.hostname);
}
