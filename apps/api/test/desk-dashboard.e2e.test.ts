import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startApi, type Api } from '../../../test/support/api.js';
import { seedKnownTelemetry } from '../../../test/support/telemetry.js';

/**
 * The /desk dashboard in headless Chromium (Debian's `chromium`, driven by playwright-core) against a real API
 * holding the telemetry package's known history: a wrong credential shows a clear message, the desk credential
 * draws the four charts with data, and a screenshot is kept in test-results/.
 */
const CHROMIUM = process.env.ITO_CHROMIUM ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
// Skipped only off CI: with CI=true (where .ci/run installs it) a missing Chromium fails the test.
const skip = !hasChromium && process.env.CI !== 'true';
const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '../../../test-results');

let api: Api;
let seed: Awaited<ReturnType<typeof seedKnownTelemetry>>;
let browser: Browser;

beforeAll(async () => {
  if (skip) return;
  if (!hasChromium) throw new Error(`no Chromium at ${CHROMIUM}: CI installs it (apt-get install -y chromium)`);
  api = await startApi();
  seed = await seedKnownTelemetry(api);
  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
});
afterAll(async () => {
  await browser?.close();
  await api?.close();
});

describe.skipIf(skip)(`the desk dashboard in headless Chromium${skip ? ` (skipped: no Chromium at ${CHROMIUM}; apt-get install -y chromium)` : ''}`, () => {
  it('refuses a wrong credential clearly, then draws the charts with the desk credential', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
    const violations: string[] = [];
    const requests: string[] = [];
    page.on('console', (m) => { if (/Content Security Policy|Refused/.test(m.text())) violations.push(m.text()); });
    page.on('pageerror', (e) => violations.push(e.message));
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(`${api.url}/desk`);
    await expect.poll(() => page.textContent('#status')).toContain('Enter a desk credential');

    await page.fill('#credential', 'ito_sk_wrongwrongwrongwrongwrongwrong');
    await page.click('button[type=submit]');
    await expect.poll(() => page.textContent('#status')).toContain('That credential was refused');
    expect(await page.isHidden('#charts')).toBe(true);

    await page.fill('#credential', seed.requesterKey);
    await page.click('button[type=submit]');
    await expect.poll(() => page.textContent('#status')).toContain('desk:read');

    await page.fill('#days', '90');
    await page.fill('#credential', seed.deskKey);
    await page.click('button[type=submit]');
    await page.waitForSelector('body[data-rendered=true]');
    for (const id of ['chart-goodput', 'chart-interruptions', 'chart-bandwidth', 'chart-slo']) {
      expect(await page.locator(`#${id} canvas`).count(), id).toBe(1);
    }
    // The series carries the run: some bucket has goodput above zero, and the group table names its fabric.
    expect(await page.textContent('#groups')).toContain('us-east-1 / infiniband');
    expect(await page.textContent('#groups')).toContain('26.5%');
    // The credential stays in the tab's session storage, never in a URL, and only this server was contacted.
    expect(await page.evaluate(() => sessionStorage.getItem('ito.desk.credential'))).toBe(seed.deskKey);
    expect(requests.every((u) => u.startsWith(api.url) && !u.includes(seed.deskKey))).toBe(true);
    expect(violations).toEqual([]);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'desk-dashboard.png'), fullPage: true });
    await page.close();
  });
});
