import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryEnv } from '../delivery/env.ts';
import { launchBrowser, openConsole } from '../helpers/browser.ts';

describe('the console: sign-in and messages', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(() => browser?.close());

  it('shows a message sent through the API within 2 s, then its delivered recipient and event', async () => {
    const env = await deliveryEnv('sqlite', { roles: ['api', 'delivery'] });
    env.mx('example.net');
    const { page } = await openConsole(browser, env.server.url, { apiKey: env.ws.apiKey, hash: '#/messages' });
    await page.getByRole('heading', { name: 'Messages' }).waitFor();

    const id = await env.send({ to: 'bob@example.net', subject: 'Quarterly report' });
    const sentAt = Date.now();
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: `#${id}`, exact: true }) });
    await row.waitFor({ timeout: 2000 });
    expect(Date.now() - sentAt).toBeLessThan(2000);
    await expect.poll(() => row.textContent()).toMatch(/Quarterly report.*bob@example\.net.*(queued|sending|delivered)/);

    await env.sink.waitForMessages(1);
    await expect.poll(async () => (await env.detail(id)).status, { timeout: 10_000 }).toBe('delivered');
    await row.getByRole('link', { name: `#${id}` }).click();
    await page.getByRole('heading', { name: 'Quarterly report' }).waitFor();
    const recipient = page
      .getByRole('region', { name: /Address, Status/ })
      .getByRole('row')
      .filter({ hasText: 'bob@example.net' });
    await expect.poll(() => recipient.textContent()).toContain('delivered');
    expect(await page.locator('ol.timeline').textContent()).toContain('email.delivered');
  });

  it('refuses a wrong key, and signing out ends the session', async () => {
    const env = await deliveryEnv('sqlite');
    const { page } = await openConsole(browser, env.server.url);
    await page.getByLabel('API key').fill('mk_' + 'x'.repeat(32));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'not valid' }).waitFor();

    await page.getByLabel('API key').fill(env.ws.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    const after = await page.evaluate(async () => (await fetch('/api/v1/emails')).status);
    expect(after).toBe(401);
  });
});
