import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openConsole } from '../helpers/browser.ts';
import { startReceiver } from '../webhooks/receiver.ts';
import { hookWorld, until } from '../webhooks/world.ts';

/** A world with the API and the webhooks role, a message to tell about, and a key for the console. */
async function world() {
  const w = await hookWorld('sqlite', { roles: ['api', 'webhooks'], webhooks: { retrySchedule: [1, 1, 1] } });
  // The console's requests count against the key like any other.
  await w.server.services.tenancy.setLimits('w', { perMinute: 10_000, perHour: 100_000 });
  const key = await w.server.services.tenancy.createKey(w.workspaceId, { name: 'console' });
  return { ...w, apiKey: key.secret };
}

describe('the console: suppressions and webhooks', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(() => browser?.close());

  it('adds a suppression the API then lists, removes it, exports and imports CSV', async () => {
    const w = await world();
    const listed = async () => (await w.server.api('GET', '/suppressions?stream=transactional', { key: w.apiKey })).body.data.map((e: { address: string }) => e.address);
    const { page } = await openConsole(browser, w.server.url, { apiKey: w.apiKey, hash: '#/suppressions' });
    await page.getByRole('heading', { name: 'Suppressions' }).waitFor();

    await page.getByLabel('Add to transactional').fill('Carol@Example.org');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByRole('cell', { name: 'carol@example.org', exact: true }).waitFor();
    expect(await listed()).toEqual(['carol@example.org']);

    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export CSV' }).click();
    const csv = readFileSync((await (await download).path())!, 'utf8');
    expect(csv).toMatch(/^address,stream,reason,email_id,created_at\ncarol@example\.org,transactional,manual,,/);

    await page.getByLabel(/Import CSV/).setInputFiles({ name: 'list.csv', mimeType: 'text/csv', buffer: Buffer.from('address\ndan@example.org\nnot-an-address\n') });
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.getByText('Imported: 1 added, 0 already listed, 1 skipped.').waitFor();
    await page.getByRole('cell', { name: 'dan@example.org', exact: true }).waitFor();

    const remove = page.getByRole('button', { name: 'Remove carol@example.org' });
    await remove.click();
    await remove.click(); // the second click confirms
    await page.getByText('carol@example.org was removed from transactional.').waitFor();
    expect(await listed()).toEqual(['dan@example.org']);
  });

  it("shows a failing endpoint's failure count and the receiver's answer; a test event reaches a working receiver", async () => {
    const w = await world();
    const failing = await startReceiver(() => ({ status: 500, body: '<b>receiver exploded</b> at step 3' }));
    const hook = await w.endpoint(failing.url);
    await w.emit('email.delivered');
    await until(async () => (await w.endpointRow(hook.id)).failure_count >= 2, 'two failed attempts');

    const { page } = await openConsole(browser, w.server.url, { apiKey: w.apiKey, hash: '#/webhooks' });
    const row = page.getByRole('row').filter({ hasText: failing.url });
    await row.waitFor();
    const failures = Number((await row.getByRole('cell').nth(2).textContent())!.trim());
    expect(failures).toBeGreaterThanOrEqual(2);

    await row.getByRole('link', { name: failing.url }).click();
    const log = page.getByRole('table').filter({ hasText: 'email.delivered' });
    await log.waitFor();
    expect(await log.locator('pre.response-body').first().textContent()).toBe('<b>receiver exploded</b> at step 3');
    expect(await log.locator('b').count()).toBe(0);
    expect(await log.getByRole('cell', { name: '500', exact: true }).count()).toBeGreaterThan(0);

    // Replay since an hour ago (the field is in the browser's local time) queues the one event again.
    const since = await page.evaluate(() => {
      const d = new Date(Date.now() - 3_600_000);
      d.setMinutes(d.getMinutes() - d.getTimezoneOffset());
      return d.toISOString().slice(0, 19);
    });
    await page.getByLabel(/Replay events since/).fill(since);
    await page.getByRole('button', { name: 'Replay' }).click();
    await page.getByText('1 event queued again for this endpoint.').waitFor();

    const working = await startReceiver(() => ({ status: 202, body: 'thanks' }));
    await page.getByRole('link', { name: 'Webhooks', exact: true }).first().click();
    await page.getByLabel('Endpoint URL').fill(working.url);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('heading', { name: working.url }).waitFor();
    await page.getByRole('button', { name: 'Send test event' }).click();
    const [received] = await working.waitFor(1);
    expect(JSON.parse(received.raw.toString()).event).toBe('email.delivered');
    await page.getByText(/Test event: delivered, HTTP 202/).waitFor();

    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const secret = (await page.locator('.secret').textContent())!;
    expect(secret).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
    const rows = (await w.server.api('GET', '/webhooks', { key: w.apiKey })).body.data;
    expect(rows.find((r: { url: string }) => r.url === working.url).secret).toBe(secret);
  });
});
