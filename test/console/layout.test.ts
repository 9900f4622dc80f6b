import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openConsole, screenshot, VIEWPORTS } from '../helpers/browser.ts';
import { startTestServer } from '../helpers/server.ts';
import { startReceiver } from '../webhooks/receiver.ts';
import { until } from '../webhooks/world.ts';
import { layoutProblems } from './layout.ts';

const SANDBOX = 'sandbox.mailsvc.test';

/**
 * A sandbox server with one message to three recipients (three `email.delivered` events a
 * receiver answers with an empty 204), one deferred recipient, and a verified domain.
 */
async function world() {
  const server = await startTestServer('sqlite', {
    random: () => 0.5,
    roles: ['api', 'delivery', 'webhooks'],
    config: { delivery: { mode: 'sandbox' }, webhooks: { allowPrivateAddresses: true } },
  });
  const ws = await server.workspace('layout');
  await server.services.tenancy.setLimits('layout', { perMinute: 100_000, perHour: 1_000_000 });
  const domain = await server.api('POST', '/domains', { key: ws.apiKey, body: { name: 'acme.test' } });
  await server.api('POST', `/domains/${domain.body.id}/verify`, { key: ws.apiKey });
  const receiver = await startReceiver(() => ({ status: 204 }));
  const hook = await server.api('POST', '/webhooks', { key: ws.apiKey, body: { url: receiver.url, events: ['email.delivered'] } });
  expect(hook.status, hook.text).toBe(201);
  const to = ['ann', 'bob', 'cy'].map((n) => `${n}@${SANDBOX}`);
  const send = async (recipients: string[]) => {
    const res = await server.api('POST', '/emails', { key: ws.apiKey, body: { from: 'Acme <news@acme.test>', to: recipients, subject: 'Hello', text: 'Hi' } });
    expect(res.status, res.text).toBe(201);
  };
  await send(to);
  await send([`deferred@${SANDBOX}`]);
  await until(async () => {
    const queue = (await server.api('GET', '/stats/queue', { key: ws.apiKey })).body;
    const log = (await server.api('GET', `/webhooks/${hook.body.id}/deliveries`, { key: ws.apiKey })).body;
    return queue.deferred === 1 && log.data.length === 3;
  }, 'three webhook attempts and a deferred recipient');
  return { server, ws, to, hookId: hook.body.id as number, domainId: domain.body.id as number };
}

describe('the console layout', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(() => browser?.close());

  it('shows charts, the DNS records, the delivery log and the queue without clipped, squeezed or hidden content', async () => {
    const w = await world();
    for (const size of ['desktop', 'phone'] as const) {
      const { page } = await openConsole(browser, w.server.url, { apiKey: w.ws.apiKey, viewport: VIEWPORTS[size] });
      const shot = (name: string) => screenshot(page, `layout-${name}-${VIEWPORTS[size].width}x${VIEWPORTS[size].height}`);

      await page.evaluate(() => (location.hash = '#/overview'));
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      await page.locator('svg.chart').first().scrollIntoViewIfNeeded();
      await shot('overview');
      expect(await layoutProblems(page), `overview (${size})`).toEqual([]);
      const lastDay = await page.locator('svg.chart').first().getAttribute('aria-label');
      expect(await page.locator('svg.chart').first().locator('.x-tick').last().textContent()).toBe(/ to (\d{4}-(\d\d-\d\d)):/.exec(lastDay!)![2]);
      // The deferred recipient waits for a retry a minute away: the page says when, in the future.
      expect(await page.locator('.oldest-deferred').textContent()).toMatch(/^waiting \d+ s, since \d{4}-/);
      expect(await page.locator('.next-retry').textContent()).toMatch(/\(in \d+ s\)$/);

      await page.evaluate((id) => (location.hash = `#/domains/${id}`), w.domainId);
      await page.getByRole('heading', { level: 1, name: 'acme.test' }).waitFor();
      await page.locator('code.record-name').first().scrollIntoViewIfNeeded();
      await shot('domain');
      expect(await layoutProblems(page), `domain (${size})`).toEqual([]);
      expect(await page.locator('code.record-name').first().textContent()).toMatch(/\._domainkey\.acme\.test$/);

      await page.evaluate((id) => (location.hash = `#/webhooks/${id}`), w.hookId);
      await page.getByRole('heading', { level: 2, name: 'Delivery log' }).waitFor();
      await page.getByRole('heading', { level: 2, name: 'Delivery log' }).scrollIntoViewIfNeeded();
      await shot('webhook');
      expect(await layoutProblems(page), `webhook (${size})`).toEqual([]);
      const log = page.getByRole('region', { name: 'Newest first' });
      const headers = await log.locator('th').allTextContents();
      const recipientColumn = headers.indexOf('Recipient');
      expect(recipientColumn).toBeGreaterThan(0);
      const recipients = await log.locator(`tbody tr td:nth-child(${recipientColumn + 1})`).allTextContents();
      expect(recipients.sort()).toEqual([...w.to].sort());
      // A 204 has no body: said in words, not drawn as an empty box.
      expect(await log.locator('pre.response-body').count()).toBe(0);
      expect(await log.locator('.response-body').allTextContents()).toEqual(['empty body', 'empty body', 'empty body']);
      await page.context().close();
    }
  });
});
