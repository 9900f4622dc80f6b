/**
 * The console's messages screen over a workspace with 10,000 messages: how long from asking for
 * the screen to its first page (50 rows) on screen, in Debian's chromium, measured two ways:
 *   - navigate: the console already open, the screen chosen (what a click in the menu costs);
 *   - cold: a fresh page load of /#/messages with the session cookie (HTML, bundle, session, list).
 * The reference, in the same run: the API call the screen makes (GET /api/v1/emails?limit=50),
 * timed from Node with the same cookie, so the ratio shows what the browser adds.
 *
 *   npm run bench -- console [messages=10000] [runs=15]
 *   MAILSVC_BENCH_PG_URL=postgres://... npm run bench -- console    # on PostgreSQL
 */
import { chromium } from 'playwright-core';
import { startServer } from '../src/main.ts';
import { CHROMIUM } from '../test/helpers/browser.ts';
import { benchConfig, benchSender } from './setup.ts';

const MESSAGES = Number(process.argv[2] ?? 10_000);
const RUNS = Number(process.argv[3] ?? 15);
const BOUND_MS = 500;

const { config, cleanUp } = benchConfig({ http: { host: '127.0.0.1', port: 0 } });
const server = await startServer(config, { roles: ['api'] });
const url = server.url!;
try {
  const { apiKey, domain } = await benchSender(server.services);

  // 10,000 messages through the API, 20 at a time, as an application would send them.
  let next = 0;
  const send = async () => {
    while (next < MESSAGES) {
      const i = next++;
      const res = await fetch(`${url}/api/v1/emails`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ from: `news@${domain}`, to: `user${i}@example.org`, subject: `Order ${i} confirmed`, text: 'Thanks' }),
      });
      if (res.status !== 201) throw new Error(`send ${i}: ${res.status} ${await res.text()}`);
    }
  };
  const seeded = performance.now();
  await Promise.all(Array.from({ length: 20 }, send));
  const seedMs = performance.now() - seeded;

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${url}/`);
  await page.getByLabel('API key').fill(apiKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');

  const firstPage = () =>
    page.waitForFunction(() => document.querySelectorAll('main table tbody tr').length === 50 && document.querySelector('main h1')?.textContent === 'Messages');
  const navigate: number[] = [];
  const cold: number[] = [];
  const api: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    await page.evaluate(() => (location.hash = '#/overview'));
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    let t = performance.now();
    await page.evaluate(() => (location.hash = '#/messages'));
    await firstPage();
    navigate.push(performance.now() - t);

    await page.goto('about:blank');
    t = performance.now();
    await page.goto(`${url}/#/messages`);
    await firstPage();
    cold.push(performance.now() - t);

    t = performance.now();
    const res = await fetch(`${url}/api/v1/emails?limit=50`, { headers: { cookie } });
    await res.json();
    api.push(performance.now() - t);
  }
  await browser.close();

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const round = (n: number) => Number(n.toFixed(1));
  const summary = {
    database: config.database.client,
    messages: MESSAGES,
    runs: RUNS,
    seed_s: round(seedMs / 1000),
    navigate_ms_median: round(median(navigate)),
    navigate_ms_max: round(Math.max(...navigate)),
    cold_load_ms_median: round(median(cold)),
    cold_load_ms_max: round(Math.max(...cold)),
    api_ms_median: round(median(api)),
    navigate_over_api: round(median(navigate) / median(api)),
    cold_over_api: round(median(cold) / median(api)),
    bound_ms: BOUND_MS,
    within_bound: median(cold) < BOUND_MS && median(navigate) < BOUND_MS,
  };
  console.log(JSON.stringify(summary));
  if (!summary.within_bound) process.exitCode = 1;
} finally {
  await server.close();
  cleanUp();
}
