import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { onTestFinished } from 'vitest';

/** Debian's chromium; never a downloaded browser. MAILSVC_TEST_CHROMIUM points elsewhere. */
export const CHROMIUM = process.env.MAILSVC_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** Where the test run writes the console's screenshots (ignored by git). */
export const SCREENSHOTS = fileURLToPath(new URL('../../test-output/console/', import.meta.url));

export const VIEWPORTS = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

/**
 * One browser per test file. A missing chromium fails the file with the way to fix it: the
 * console's tests must never pass by not running.
 */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`The console's browser tests need Debian's chromium at ${CHROMIUM}: run apt-get install -y chromium (.ci/run does), or set MAILSVC_TEST_CHROMIUM`);
  }
  // The sandbox of chromium needs user namespaces, which CI containers running as root lack.
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

export interface ConsolePage {
  context: BrowserContext;
  page: Page;
  /**
   * Every URL the page fetched, in order; a request the page's policy blocked before it left
   * (Chromium still announces it) is not counted.
   */
  requests: string[];
  /** Dialogs (alert, confirm, prompt) the page tried to open. */
  dialogs: string[];
}

/** A fresh browser context on the console, closed after the test; signs in when given a key. */
export async function openConsole(
  browser: Browser,
  baseUrl: string,
  opts: { apiKey?: string; viewport?: { width: number; height: number }; hash?: string } = {},
): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport: opts.viewport ?? VIEWPORTS.desktop });
  onTestFinished(() => context.close());
  const page = await context.newPage();
  const requests: string[] = [];
  const dialogs: string[] = [];
  context.on('requestfinished', (r) => requests.push(r.url()));
  context.on('requestfailed', (r) => {
    if (!/^csp$|BLOCKED_BY_CSP/i.test(r.failure()?.errorText ?? '')) requests.push(`${r.url()} (${r.failure()?.errorText})`);
  });
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.goto(`${baseUrl}/${opts.hash ?? ''}`);
  if (opts.apiKey) {
    await page.getByLabel('API key').fill(opts.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  }
  return { context, page, requests, dialogs };
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: false });
  return file;
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core's violations of serious or critical impact on the page as it is now. axe is evaluated
 * through the browser's debugging protocol, so the page's own CSP stays in force.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, o: object): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
