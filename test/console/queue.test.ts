import type { Browser, Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openConsole } from '../helpers/browser.ts';
import { startTestServer } from '../helpers/server.ts';

/** The queued, deferred and held counts of a group's row. */
async function counts(row: Locator): Promise<number[]> {
  const cells = row.getByRole('cell');
  return Promise.all([1, 2, 3].map(async (i) => Number((await cells.nth(i).textContent())!.trim())));
}

describe('the console: the queue by destination group', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(() => browser?.close());

  it('holds a group and releases it, the counts following', async () => {
    const server = await startTestServer('sqlite');
    const ws = await server.sender('w', 'acme.test');
    await server.services.db('delivery_domains').insert([
      { domain: 'gmail.com', group_name: 'provider:google', expires_at: Date.now() + 3_600_000 },
      { domain: 'other.org', group_name: 'mx:mx.other.org', expires_at: Date.now() + 3_600_000 },
    ]);
    const sent = await server.api('POST', '/emails', {
      key: ws.apiKey,
      body: { from: 'x@acme.test', to: ['a@gmail.com', 'b@gmail.com', 'c@other.org'], subject: 's', text: 't' },
    });
    expect(sent.status).toBe(201);

    const { page } = await openConsole(browser, server.url, { apiKey: ws.apiKey, hash: '#/queue' });
    await page.getByRole('link', { name: 'Queue', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Queue' }).waitFor();
    const google = page.getByRole('row').filter({ hasText: 'provider:google' });
    await google.waitFor();
    expect(await counts(google)).toStrictEqual([2, 0, 0]);

    await page.getByRole('button', { name: 'Hold provider:google' }).click();
    await page.getByText('provider:google is on hold: 2 recipients held; mail for it accepted from now on waits too.').waitFor();
    // The notice shows first; the table follows with the statistics read again.
    await expect.poll(() => counts(google)).toStrictEqual([0, 0, 2]);
    expect(await google.getByRole('cell').nth(5).textContent()).toBe('on hold');
    expect(await counts(page.getByRole('row').filter({ hasText: 'mx:mx.other.org' }))).toStrictEqual([1, 0, 0]);
    expect((await server.api('GET', `/emails/${sent.body.id}`, { key: ws.apiKey })).body.recipients.map((r: { status: string }) => r.status)).toStrictEqual([
      'held',
      'held',
      'queued',
    ]);

    await page.getByRole('button', { name: 'Release provider:google' }).click();
    await page.getByText('provider:google is released: 2 recipients due now.').waitFor();
    await expect.poll(() => counts(google)).toStrictEqual([2, 0, 0]);
    expect(await google.getByRole('cell').nth(5).textContent()).toBe('open');
  });
});
