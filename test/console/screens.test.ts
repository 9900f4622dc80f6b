import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openConsole, screenshot, seriousViolations, VIEWPORTS } from '../helpers/browser.ts';
import { sandboxEnv } from '../sandbox/env.ts';
import { startReceiver } from '../webhooks/receiver.ts';
import { until } from '../webhooks/world.ts';
import { layoutProblems } from './layout.ts';

/** A sandbox server with something on every screen: delivered, bounced and held mail, a webhook, a second key. */
async function populated() {
  const env = await sandboxEnv('sqlite', { roles: ['api', 'delivery'] });
  const delivered = await env.send({
    to: 'delivered@sandbox.mailsvc.test',
    subject: 'Welcome aboard',
    html: '<h1>Welcome</h1><p>Glad you are here.</p>',
    text: 'Welcome. Glad you are here.',
  });
  const bounced = await env.send({ to: 'bounced@sandbox.mailsvc.test', subject: 'Your invoice' });
  await until(async () => (await env.detail(bounced)).status === 'bounced' && (await env.detail(delivered)).status === 'delivered', 'both outcomes');
  await env.server.services.db('delivery_domains').insert({ domain: 'held.example', group_name: 'mx:mx.held.example', expires_at: Date.now() + 3_600_000 });
  await env.server.api('POST', '/queue/hold', { key: env.ws.apiKey, body: { group: 'mx:mx.held.example' } });
  const held = await env.send({ to: 'someone@held.example', subject: 'Held for now' });
  await until(async () => (await env.detail(held)).status === 'held', 'the held message');
  const receiver = await startReceiver();
  const hook = await env.server.services.webhooks.create(env.ws.id, { url: receiver.url.replace('127.0.0.1', 'hooks.example') });
  await env.server.services.tenancy.createKey(env.ws.id, { name: 'billing app' });
  const domain = (await env.server.api('GET', '/domains', { key: env.ws.apiKey })).body.data[0];
  const [capture] = await env.inbox(`?email_id=${delivered}`);
  const template = await env.server.api('POST', '/templates', {
    key: env.ws.apiKey,
    body: {
      name: 'welcome',
      subject: 'Welcome, {{first_name}}',
      html: '<h1>Welcome {{first_name}}</h1><p>{{{account.signature_html}}}</p>',
      text: 'Welcome {{first_name}}',
    },
  });
  return { env, delivered, hookId: hook.id, domainId: domain.id, captureId: capture.id, templateId: template.body.id as number };
}

/** Every screen, by the route that shows it and the heading it must reach. */
function screens(w: Awaited<ReturnType<typeof populated>>): [string, string, string | RegExp][] {
  return [
    ['overview', '#/overview', 'Overview'],
    ['messages', '#/messages', 'Messages'],
    ['queue', '#/queue', 'Queue'],
    ['message', `#/messages/${w.delivered}`, 'Welcome aboard'],
    ['suppressions', '#/suppressions', 'Suppressions'],
    ['templates', '#/templates', 'Templates'],
    ['template', `#/templates/${w.templateId}`, 'welcome'],
    ['domains', '#/domains', 'Domains'],
    ['domain', `#/domains/${w.domainId}`, 'acme.test'],
    ['webhooks', '#/webhooks', 'Webhooks'],
    ['webhook', `#/webhooks/${w.hookId}`, /^http:\/\/hooks\.example/],
    ['keys', '#/keys', 'API keys'],
    ['sandbox', '#/sandbox', 'Sandbox inbox'],
    ['sandbox-message', `#/sandbox/${w.captureId}`, 'Welcome aboard'],
  ];
}

async function check(page: Page, name: string, size: keyof typeof VIEWPORTS): Promise<string[]> {
  await screenshot(page, `${name}-${VIEWPORTS[size].width}x${VIEWPORTS[size].height}`);
  const axe = (await seriousViolations(page)).map((v) => `${name} (${size}): ${v.id} ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  return [...axe, ...(await layoutProblems(page)).map((p) => `${name} (${size}): ${p}`)];
}

describe('the console: every screen, at desktop and phone sizes', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(() => browser?.close());

  for (const size of ['desktop', 'phone'] as const) {
    it(`renders each screen at ${VIEWPORTS[size].width}x${VIEWPORTS[size].height} with no serious accessibility violation`, async () => {
      const w = await populated();
      const { page } = await openConsole(browser, w.env.server.url, { viewport: VIEWPORTS[size] });
      await page.getByLabel('API key').waitFor();
      const problems = await check(page, 'signin', size);

      await page.getByLabel('API key').fill(w.env.ws.apiKey);
      await page.getByRole('button', { name: 'Sign in' }).click();
      for (const [name, hash, heading] of screens(w)) {
        await page.evaluate((h) => (location.hash = h), hash);
        await page.getByRole('heading', { level: 1, name: heading }).waitFor();
        if (name === 'message' || name === 'sandbox-message') await page.frameLocator('iframe.email-html').locator('body').waitFor();
        problems.push(...(await check(page, name, size)));
      }
      expect(problems).toEqual([]);
    });
  }
});
