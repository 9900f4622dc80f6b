import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { dkimTxtRecord } from '../../src/dkim/keys.ts';
import { createRenderStep } from '../../src/delivery/render.ts';
import { createDnsResolver } from '../../src/dns/resolver.ts';
import { domainsRepo } from '../../src/store/domains.ts';
import { STORES } from '../helpers/stores.ts';
import { dkimpyPython, dkimpyVerdict, noteWithoutDkimpy } from '../delivery/dkim-check.ts';
import { deliveryEnv, FROM_DOMAIN } from '../delivery/env.ts';
import { testCertificate } from '../inbound/harness.ts';
import { sendMail } from '../inbound/smtp-client.ts';

const RETURN_PATH = 'bounces.mail.mailsvc.test';
const run = promisify(execFile);

async function world(kind: (typeof STORES)[number]) {
  const env = await deliveryEnv(kind, {
    roles: ['api', 'inbound'],
    config: { tls: await testCertificate(), inbound: { host: '127.0.0.1', port: 0, returnPathDomain: RETURN_PATH, parseWorkers: 1 } },
  });
  env.mx('dest.test');
  const render = createRenderStep({ tokens: env.server.services.tokens, baseUrl: env.server.url });
  const deliver = async (to: string, stream: 'broadcast' | 'transactional') => {
    const before = env.sink.messages.length;
    const id = await env.send({ to, stream, html: '<p>News. <a href="{{unsubscribe_url}}">Unsubscribe</a></p>', text: 'News. Unsubscribe: {{unsubscribe_url}}' });
    await env.worker({ render }).runOnce();
    return { id, copy: env.sink.messages.slice(before).find((m) => m.to[0] === to) };
  };
  return { env, deliver };
}

/** The DKIM verdict and the header fields its h= covers, keys looked up in the test's DNS. */
async function dkim(raw: Buffer, dnsAddress: string) {
  const resolver = createDnsResolver([dnsAddress], 2000);
  const result = await dkimVerify(raw, { resolver: (name: string) => resolver.resolveTxt(name) });
  const field = raw
    .toString('latin1')
    .split('\r\n\r\n')[0]!
    .replace(/\r\n[ \t]+/g, ' ');
  const signed = /^DKIM-Signature:.*?\bh=([^;]+)/m.exec(field)![1]!.replace(/\s+/g, '');
  return {
    result: result.results.map((r: { status: { result: string } }) => r.status.result),
    signed: signed
      .toLowerCase()
      .split(':')
      .map((s) => s.trim()),
  };
}

describe.each(STORES)('one-click unsubscribe (%s)', (kind) => {
  it('broadcast mail carries both List-Unsubscribe fields under its DKIM signature; a one-click POST suppresses broadcast only', async (ctx) => {
    await noteWithoutDkimpy(ctx);
    const { env, deliver } = await world(kind);
    const { copy } = await deliver('reader@dest.test', 'broadcast');
    const parsed = await simpleParser(copy!.raw);
    const field = (name: string) =>
      parsed.headerLines
        .filter((h) => h.key === name)
        .map((h) =>
          h.line
            .slice(name.length + 1)
            .replace(/\r?\n[ \t]+/g, ' ')
            .trim(),
        );
    expect(field('list-unsubscribe-post')).toStrictEqual(['List-Unsubscribe=One-Click']);
    const [listUnsubscribe] = field('list-unsubscribe');
    const [, https, mailto] = /^<(https?:\/\/[^>]+)>, <mailto:([^>]+)>$/.exec(listUnsubscribe!)!;
    expect(https).toMatch(new RegExp(`^${env.server.url}/t/u/[a-z2-7]+$`));
    expect(mailto).toMatch(new RegExp(`^u\\+[a-z2-7]+@${RETURN_PATH.replaceAll('.', '\\.')}$`));
    // {{unsubscribe_url}} became this recipient's URL in both parts.
    expect(parsed.text).toContain(`Unsubscribe: ${https}`);
    expect(parsed.html).toContain(`<a href="${https}">Unsubscribe</a>`);

    const verdict = await dkim(copy!.raw, env.dns.address);
    expect(verdict.result).toStrictEqual(['pass']);
    expect(verdict.signed).toEqual(expect.arrayContaining(['list-unsubscribe', 'list-unsubscribe-post']));
    if (dkimpyPython) {
      const row = (await domainsRepo.byName(env.server.services.db, FROM_DOMAIN))!;
      expect(dkimpyVerdict(copy!.raw, `${row.selector}._domainkey.${FROM_DOMAIN}`, dkimTxtRecord(row.dkim_public_key))).toBe('pass');
    }

    // GET only shows the button; nothing happens until the POST.
    const page = await fetch(https!);
    expect([page.status, page.headers.get('content-type')]).toStrictEqual([200, 'text/html; charset=utf-8']);
    expect(await page.text()).toContain('<form method="post">');
    expect((await env.server.api('GET', `/suppressions/broadcast/reader@dest.test`, { key: env.ws.apiKey })).status).toBe(404);

    const curl = await run('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-X', 'POST', '-d', 'List-Unsubscribe=One-Click', https!]);
    expect(curl.stdout).toBe('200');
    expect((await env.server.api('GET', `/suppressions/broadcast/reader@dest.test`, { key: env.ws.apiKey })).body).toMatchObject({ reason: 'unsubscribe' });

    const later = await deliver('reader@dest.test', 'broadcast');
    expect(later.copy).toBeUndefined();
    expect((await env.detail(later.id)).recipients[0].status).toBe('suppressed');
    const transactional = await deliver('reader@dest.test', 'transactional');
    expect((await env.detail(transactional.id)).recipients[0].status).toBe('delivered');
    expect(transactional.copy!.raw.toString('latin1')).not.toMatch(/^List-Unsubscribe/im);

    // A forged token unsubscribes nobody.
    const forged = `${https!.slice(0, -1)}${https!.endsWith('a') ? 'b' : 'a'}`;
    expect((await fetch(forged, { method: 'POST', body: 'List-Unsubscribe=One-Click' })).status).toBe(404);
  });

  it("mail to the mailto address, Apple Mail's own request included, unsubscribes", async () => {
    const { env, deliver } = await world(kind);
    const { id, copy } = await deliver('kim@dest.test', 'broadcast');
    const mailto = /<mailto:([^>]+)>/.exec(copy!.raw.toString('latin1'))![1]!;
    const port = env.server.roles.inbound!.ports.smtp!;
    const apple = `From: kim@dest.test\r\nTo: ${mailto}\r\nSubject: Unsubscribe\r\nAuto-Submitted: auto-replied\r\nX-Apple-Unsubscribe: true\r\n\r\nThis message was automatically generated by Mail.\r\n`;
    const r = await sendMail(port, 'kim@dest.test', [mailto], apple);
    expect([r.rcpt[0]!.code, r.data!.code]).toStrictEqual([250, 250]);
    const events = (await env.detail(id)).events.map((e: { event: string }) => e.event);
    expect(events).toStrictEqual(['email.delivered', 'email.unsubscribed']);
    expect((await env.server.api('GET', `/suppressions/broadcast/kim@dest.test`, { key: env.ws.apiKey })).body).toMatchObject({ reason: 'unsubscribe' });
  });
});
