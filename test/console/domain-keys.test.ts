import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openConsole } from '../helpers/browser.ts';
import { startTestServer } from '../helpers/server.ts';

describe('the console: a domain page lists its DKIM keys', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(() => browser?.close());

  it('shows each key with its selector, algorithm and status', async () => {
    const server = await startTestServer('sqlite');
    const ws = await server.workspace('w');
    await server.verifiedDomain(ws.id, 'keys.test');
    const domain = (await server.api('GET', '/domains', { key: ws.apiKey })).body.data[0];
    const ed = (await server.api('POST', `/domains/${domain.id}/keys`, { key: ws.apiKey, body: { algorithm: 'ed25519' } })).body;

    const { page } = await openConsole(browser, server.url, { apiKey: ws.apiKey, hash: `#/domains/${domain.id}` });
    await page.getByRole('heading', { name: 'DKIM keys' }).waitFor();
    const table = page.locator('h2:text-is("DKIM keys") + * table, h2:text-is("DKIM keys") + table').first();
    const rows = await table.locator('tbody tr').allInnerTexts();
    expect(
      rows.map((r) =>
        r
          .split('\t')
          .slice(0, 3)
          .map((c) => c.trim()),
      ),
    ).toStrictEqual([
      [domain.selector, 'rsa-sha256', 'active'],
      [ed.selector, 'ed25519-sha256', 'pending'],
    ]);
  });
});
