import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openConsole, seriousViolations } from '../helpers/browser.ts';
import { startTestServer } from '../helpers/server.ts';

describe('the console: templates', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(() => browser?.close());

  it('lists templates, shows one, and previews it with the variables typed in, its HTML in the sandboxed frame', async () => {
    const server = await startTestServer('sqlite');
    const ws = await server.workspace('w');
    await server.services.tenancy.setLimits('w', { perMinute: 10_000, perHour: 100_000 });
    await server.verifiedDomain(ws.id, 'acme.test');
    const body = {
      name: 'welcome',
      subject: 'Welcome, {{first_name}}',
      html: '<h1>Hello <em>{{first_name}}</em></h1><p>{{user.plan}}</p><img alt="" src="http://127.0.0.1:9/pixel.gif">',
      text: 'Hello {{first_name}}, plan {{user.plan}}',
    };
    const created = (await server.api('POST', '/templates', { key: ws.apiKey, body })).body;
    await server.api('POST', '/templates', { key: ws.apiKey, body: { name: 'receipt', subject: 'Your receipt', text: 'Thanks' } });

    const { page, requests } = await openConsole(browser, server.url, { apiKey: ws.apiKey, hash: '#/templates' });
    await page.getByRole('heading', { level: 1, name: 'Templates' }).waitFor();
    const row = page.getByRole('row').filter({ hasText: 'Welcome, {{first_name}}' });
    await row.waitFor();
    expect(await row.textContent()).toContain('first_name, user.plan');
    expect(await page.getByRole('row').filter({ hasText: 'receipt' }).count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);

    await row.getByRole('link', { name: 'welcome' }).click();
    await page.getByRole('heading', { level: 1, name: 'welcome' }).waitFor();
    expect(await page.locator('pre.raw').first().textContent()).toBe(body.html);

    await page.getByLabel('first_name').fill('<b>Ann</b>');
    await page.getByLabel('user.plan').fill('pro');
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.locator('.rendered-subject').getByText('Welcome, <b>Ann</b>').waitFor();
    const frame = page.frameLocator('iframe.email-html');
    // The variable is escaped in the HTML part: its markup shows as text, the template's own is markup.
    await frame.locator('em').getByText('<b>Ann</b>').waitFor();
    expect(await frame.locator('b').count()).toBe(0);
    await frame.getByText('pro').waitFor();
    expect(await page.locator('iframe.email-html').getAttribute('sandbox')).toBe('');
    expect(await page.locator('pre.text-part').textContent()).toBe('Hello <b>Ann</b>, plan pro');
    // The frame's policy blocks remote loads: opening a preview tells no one.
    expect(requests.filter((u) => u.includes('pixel.gif'))).toEqual([]);
    expect(await seriousViolations(page)).toEqual([]);

    // A refusal is shown as the API words it: here the template gained a variable since the page was opened.
    await server.api('PATCH', `/templates/${created.id}`, { key: ws.apiKey, body: { subject: 'Welcome, {{first_name}} {{last_name}}' } });
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByRole('alert').getByText('Missing template variable `last_name`').waitFor();
    await page.reload();
    await page.getByLabel('last_name').fill('B');
    await page.getByLabel('first_name').fill('Ann');
    await page.getByLabel('user.plan').fill('pro');
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.locator('.rendered-subject').getByText('Welcome, Ann B').waitFor();
  });
});
