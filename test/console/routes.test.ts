import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openConsole, seriousViolations } from '../helpers/browser.ts';
import { compose, routeWorld } from '../routes/world.ts';
import { startReceiver } from '../webhooks/receiver.ts';
import { until } from '../webhooks/world.ts';

describe('the console: routes', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(() => browser?.close());

  it("lists routes, adds one showing its secret once, and shows a route's delivery log", async () => {
    const world = await routeWorld('sqlite');
    const receiver = await startReceiver(() => ({ status: 500, body: '<b>app down</b>' }));
    const route = await world.route('support@acme.test', receiver.url);
    await world.send(await compose({ from: 'a@plain.test', to: 'support@acme.test', subject: 'hi', text: 'hi' }), { from: 'a@plain.test', to: ['support@acme.test'] });
    await receiver.waitFor(1);
    await until(async () => (await world.server.api('GET', `/routes/${route.id}/deliveries`, { key: world.apiKey })).body.data.length > 0, 'the attempt logged');

    const { page } = await openConsole(browser, world.server.url, { apiKey: world.apiKey, hash: '#/routes' });
    await page.getByRole('heading', { level: 1, name: 'Routes' }).waitFor();
    const row = page.getByRole('row').filter({ hasText: 'support@acme.test' });
    await row.waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    await page.getByRole('textbox', { name: 'Match', exact: true }).fill('*+tickets@acme.test');
    await page.getByRole('textbox', { name: 'Route URL' }).fill(receiver.url);
    await page.getByRole('button', { name: 'Add route' }).click();
    await page.getByText('Route *+tickets@acme.test added.').waitFor();
    expect(await page.locator('p.secret').textContent()).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
    await page.getByRole('textbox', { name: 'Match', exact: true }).fill('x@elsewhere.test');
    await page.getByRole('button', { name: 'Add route' }).click();
    await page.getByText('Field `match`: elsewhere.test is not a domain of this workspace').waitFor();

    await row.getByRole('link', { name: 'support@acme.test' }).click();
    await page.getByRole('heading', { level: 1, name: 'support@acme.test' }).waitFor();
    const log = page.getByRole('table').filter({ hasText: '500' });
    await log.waitFor();
    expect(await log.locator('pre.response-body').first().textContent()).toBe('<b>app down</b>');
    expect(await log.locator('b').count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
  });
});
