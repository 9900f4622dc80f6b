import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openConsole } from '../helpers/browser.ts';
import { sandboxEnv } from '../sandbox/env.ts';
import { startTestServer } from '../helpers/server.ts';
import { until } from '../webhooks/world.ts';

describe('the console: overview, domains, API keys, sandbox inbox, scopes', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(() => browser?.close());

  it("shows the day's outcomes and the queue, and the sandbox inbox as a mail client would", async () => {
    const env = await sandboxEnv('sqlite', { roles: ['api', 'delivery'] });
    const ok = await env.send({ to: 'delivered@sandbox.mailsvc.test', subject: 'Receipt 1', html: '<p>Thanks for <em>your order</em></p>' });
    const bad = await env.send({ to: 'bounced@sandbox.mailsvc.test', subject: 'Receipt 2' });
    await until(async () => (await env.detail(ok)).status === 'delivered' && (await env.detail(bad)).status === 'bounced', 'outcomes');

    const { page } = await openConsole(browser, env.server.url, { apiKey: env.ws.apiKey, hash: '#/overview' });
    const delivery = page.locator('figure').filter({ hasText: 'transactional: delivery' });
    await delivery.getByText('sent: 2').waitFor();
    await delivery.getByText('delivered: 1').waitFor();
    await delivery.getByText('bounced (permanent): 1').waitFor();
    expect(await page.locator('.deferred-count').textContent()).toBe('0');
    // The complaint rate of the domain over 7 days: one delivered, no complaint.
    const rates = page.getByRole('region', { name: 'Complaint rate per sending domain and stream' });
    expect(await rates.getByRole('row').nth(1).textContent()).toBe('acme.testtransactional100%ok');

    await page.getByRole('link', { name: 'Sandbox inbox' }).click();
    await page.getByRole('link', { name: 'Receipt 1' }).click();
    await page.getByRole('heading', { level: 1, name: 'Receipt 1' }).waitFor();
    await page.frameLocator('iframe.email-html').getByText('your order').waitFor();
    expect(await page.getByText('250 2.0.0').count()).toBeGreaterThan(0);

    // The bounce put the address on the list, linked to the message that caused it.
    await page.getByRole('link', { name: 'Suppressions' }).click();
    await page.getByText('Report', { exact: true }).click();
    await page.locator('.cause').getByText('permanent: user_unknown (5.1.1)').waitFor();
    expect(await page.locator('.cause').textContent()).toContain('User unknown in local recipient table');
    await page.getByRole('link', { name: `message #${bad}` }).click();
    await page.getByRole('heading', { level: 1, name: 'Receipt 2' }).waitFor();
    expect(await page.locator('ol.timeline').textContent()).toMatch(/email\.bounced.*\(permanent\).*User unknown/);
  });

  it('adds and verifies a domain, switches tracking, creates a key shown once and revokes it', async () => {
    const env = await sandboxEnv('sqlite');
    const { page } = await openConsole(browser, env.server.url, { apiKey: env.ws.apiKey, hash: '#/domains' });
    await page.getByLabel('Domain name').fill('shop.test');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.getByRole('heading', { level: 1, name: 'shop.test' }).waitFor();
    expect(await page.getByRole('button', { name: /^Copy the value of the dkim record$/ }).count()).toBe(1);
    await page.getByRole('button', { name: 'Verify now' }).click();
    await page.getByText('shop.test is verified.').waitFor();
    await page.getByLabel('Click tracking').check();
    await page.getByText('Click tracking is on.').waitFor();
    const domains = (await env.server.api('GET', '/domains', { key: env.ws.apiKey })).body.data;
    expect(domains.find((d: { name: string }) => d.name === 'shop.test')).toMatchObject({ status: 'verified', click_tracking: true, open_tracking: false });

    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Name', { exact: true }).fill('billing app');
    await page.getByLabel('Scope', { exact: true }).selectOption('shop.test');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.locator('.secret').textContent())!;
    expect(secret).toMatch(/^mk_[0-9A-Za-z]{32}$/);
    expect((await env.server.api('GET', '/emails', { key: secret })).status).toBe(200);
    const row = page.getByRole('row').filter({ hasText: 'billing app' });
    expect(await row.textContent()).toContain('domain:shop.test');
    await page.reload();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(await page.content()).not.toContain(secret);

    const revoke = page.getByRole('button', { name: 'Revoke key billing app' });
    await revoke.click();
    await revoke.click();
    await page.getByText('Key "billing app" is revoked').waitFor();
    expect((await env.server.api('GET', '/emails', { key: secret })).status).toBe(401);
  });

  it("shows a domain's sending pool in the list and on its page", async () => {
    const sourceAddresses = [{ address: '127.0.0.10', ehlo: 'mta1.pools.test' }];
    const server = await startTestServer('sqlite', { config: { delivery: { sourceAddresses, pools: { bulk: ['127.0.0.10'] } } } });
    const ws = await server.workspace();
    const pooled = (await server.api('POST', '/domains', { key: ws.apiKey, body: { name: 'pooled.test' } })).body;
    const plain = (await server.api('POST', '/domains', { key: ws.apiKey, body: { name: 'plain.test' } })).body;
    await server.api('PATCH', `/domains/${pooled.id}`, { key: ws.apiKey, body: { pool: 'bulk' } });

    const { page } = await openConsole(browser, server.url, { apiKey: ws.apiKey, hash: '#/domains' });
    await page.getByRole('columnheader', { name: 'Sending pool' }).waitFor();
    expect(await page.getByRole('row').filter({ hasText: 'pooled.test' }).textContent()).toContain('bulk');
    expect(await page.getByRole('row').filter({ hasText: 'plain.test' }).textContent()).toContain('—');
    await page.getByRole('link', { name: 'pooled.test' }).click();
    await page.getByRole('heading', { level: 1, name: 'pooled.test' }).waitFor();
    expect(await page.locator('dl.facts').textContent()).toContain('Sending poolbulk');
    await page.evaluate((id) => (location.hash = `#/domains/${id}`), plain.id);
    await page.getByRole('heading', { level: 1, name: 'plain.test' }).waitFor();
    expect(await page.locator('dl.facts').textContent()).toContain("Sending poolnone of its own: the workspace's, else the stream's, else every source address");
  });

  it('gives a domain-scoped key only what the API lets it see', async () => {
    const env = await sandboxEnv('sqlite');
    await env.server.api('POST', '/domains', { key: env.ws.apiKey, body: { name: 'other.test' } });
    const scoped = await env.server.services.tenancy.createKey(env.ws.id, { domain: 'other.test' });
    const mine = await env.send({ to: 'a@example.org', subject: 'From acme' });
    const { page } = await openConsole(browser, env.server.url, { apiKey: scoped.secret, hash: '#/messages' });
    await page.getByRole('heading', { name: 'Messages' }).waitFor();
    await page.getByText('No message matches.').waitFor();
    const nav = (await page.getByRole('navigation').textContent())!;
    expect(nav).not.toMatch(/Domains|Webhooks|API keys/);
    await page.evaluate((id) => (location.hash = `#/messages/${id}`), mine);
    await page.getByRole('alert').filter({ hasText: 'Not found' }).waitFor();
  });
});
