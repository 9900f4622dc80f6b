import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryEnv, FROM_DOMAIN } from '../delivery/env.ts';
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

  it('searches by subject, sender, tag, metadata and dates, and keeps the search in the URL to share', async () => {
    const env = await deliveryEnv('sqlite');
    const fall = await env.send({ to: 'ada@example.net', subject: 'Fall sale starts', tags: [{ name: 'campaign', value: 'fall' }], metadata: { region: 'eu' } });
    const other = await env.send({ to: 'bob@example.net', subject: 'Fall sale starts', tags: [{ name: 'campaign', value: 'fall' }], metadata: { region: 'us' } });
    const receipt = await env.send({ to: 'ada@example.net', subject: 'Your receipt' });
    const { page } = await openConsole(browser, env.server.url, { apiKey: env.ws.apiKey, hash: '#/messages' });
    await page.getByRole('heading', { name: 'Messages' }).waitFor();
    const shown = async () => (await page.locator('main table tbody tr').allTextContents()).map((row) => Number(/#(\d+)/.exec(row)?.[1]));
    await expect.poll(shown).toStrictEqual([receipt, other, fall]);

    await page.getByLabel('Subject').fill('SALE');
    await page.getByLabel('Tag').fill('campaign:fall');
    await page.getByLabel('Metadata').fill('region=eu');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(shown).toStrictEqual([fall]);
    const shared = page.url();
    expect(new URL(shared).hash).toBe('#/messages?subject=SALE&tag=campaign%3Afall&metadata=region%3Deu');

    // The shared URL opens on the same search, its fields filled in.
    const { page: second } = await openConsole(browser, env.server.url, { apiKey: env.ws.apiKey, hash: new URL(shared).hash });
    await second.getByRole('heading', { name: 'Messages' }).waitFor();
    await expect.poll(async () => second.locator('main table tbody tr').count()).toBe(1);
    expect(await second.getByLabel('Tag').inputValue()).toBe('campaign:fall');

    // Dates are whole days here; the sender is matched without case.
    const today = await page.evaluate(() => new Date().toLocaleDateString('en-CA'));
    await page.getByLabel('Subject').fill('');
    await page.getByLabel('Tag').fill('');
    await page.getByLabel('Metadata').fill('');
    await page.getByLabel('From', { exact: true }).fill(`NEWS@${FROM_DOMAIN.toUpperCase()}`);
    await page.getByLabel('Created from').fill(today);
    await page.getByLabel('Created to').fill(today);
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(shown).toStrictEqual([receipt, other, fall]);
    await page.getByLabel('Created to').fill('2020-01-01');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No message matches.').waitFor();

    // A search the API refuses says why.
    await page.getByLabel('Created to').fill('');
    await page.getByLabel('Metadata').fill('bad key=1');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('alert').filter({ hasText: 'metadata keys are 1-64 letters' }).waitFor();
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
