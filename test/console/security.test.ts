import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { launchBrowser, openConsole } from '../helpers/browser.ts';
import { startTestServer } from '../helpers/server.ts';

/** An HTTP server on loopback that records every request and answers with `page`. */
async function hitRecorder(page = 'ok'): Promise<{ url: string; hits: string[] }> {
  const hits: string[] = [];
  const server: Server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': req.url === '/attack' ? 'text/html' : 'text/plain' }).end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

async function consoleWorld() {
  const server = await startTestServer('sqlite');
  const ws = await server.workspace('console-security');
  await server.services.tenancy.setLimits('console-security', { perMinute: 10_000, perHour: 100_000 });
  await server.verifiedDomain(ws.id, 'acme.test');
  return { server, ws };
}

describe('the console: hostile content and other origins', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(() => browser?.close());

  it('renders script and onerror payloads in a subject and an HTML body inert', async () => {
    const { server, ws } = await consoleWorld();
    const payload = await hitRecorder();
    const subject = `<img src=${payload.url}/subject.gif onerror=alert(1)><script>alert(2)</script>`;
    const html = [
      '<p>Hi</p><script>alert(3)</script>',
      `<img src="${payload.url}/pixel.gif" onerror="alert(4)">`,
      '<svg onload="alert(5)"></svg>',
      `<link rel="stylesheet" href="${payload.url}/style.css">`,
      `<div style="background:url(${payload.url}/bg.png)">x</div>`,
      `<iframe src="${payload.url}/frame"></iframe>`,
      `<img src=x onerror="fetch('${payload.url}/fetch')">`,
    ].join('\n');
    const sent = await server.api('POST', '/emails', { key: ws.apiKey, body: { from: 'news@acme.test', to: 'bob@example.net', subject, html } });
    expect(sent.status).toBe(201);

    const { page, dialogs, requests } = await openConsole(browser, server.url, { apiKey: ws.apiKey, hash: '#/messages' });
    const response = await page.reload();
    expect(response!.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await expect.poll(() => page.locator('td .subject').first().textContent()).toBe(subject);

    await page.getByRole('link', { name: `#${sent.body.id}` }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(subject);
    const frame = page.frameLocator('iframe.email-html');
    await frame.locator('p', { hasText: 'Hi' }).waitFor();
    expect(await page.locator('iframe.email-html').getAttribute('sandbox')).toBe('');
    // The frame's load event follows each of its images, styles and frames loading or failing, so
    // a request that left has reached the recorder by then.
    const emailFrame = await (await page.locator('iframe.email-html').elementHandle())!.contentFrame();
    await emailFrame!.waitForLoadState('load');

    expect(dialogs).toEqual([]);
    expect(payload.hits).toEqual([]);
    expect(requests.filter((u) => u.startsWith(payload.url))).toEqual([]);
    expect(await page.locator('script').count()).toBe(1);
  });

  it("refuses a state change a page of another origin makes with the visitor's session", async () => {
    const { server, ws } = await consoleWorld();
    const attack = `<!doctype html><form id=f method=POST action="${server.url}/api/v1/suppressions" enctype="text/plain">
      <input name='{"address":"victim@example.org","stream":"transactional","x":"' value='"}'></form>
      <script>
        fetch('${server.url}/api/v1/suppressions', { method: 'POST', credentials: 'include', headers: { 'content-type': 'text/plain' },
          body: JSON.stringify({ address: 'fetch@example.org', stream: 'transactional' }) })
          .catch(() => {}).finally(() => document.getElementById('f').submit());
      </script>`;
    const evil = await hitRecorder(attack);
    const { page } = await openConsole(browser, server.url, { apiKey: ws.apiKey });

    const refused = page.waitForResponse((r) => r.url().endsWith('/api/v1/suppressions') && r.request().method() === 'POST' && r.request().resourceType() === 'document');
    await page.goto(`${evil.url}/attack`);
    const res = await refused;
    expect(res.status()).toBe(403);
    expect(await res.text()).toContain('Cross-origin request refused');
    expect((await server.api('GET', '/suppressions', { key: ws.apiKey })).body.data).toEqual([]);
  });
});
