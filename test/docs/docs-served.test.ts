import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseUrl } from '../helpers/api.js';
import { scaled } from '../helpers/timeouts.js';
import { launchChromium } from '../helpers/browser.js';

/**
 * The docs page as the local runtime (`npm start`) serves it at /docs/, in Debian's headless
 * Chromium: it loads nothing from another host. Every request that is not to the loopback
 * address is refused and recorded, and the test fails on the first one (a telemetry beacon,
 * a CDN logo or icon set, a web font); requests the page's Content-Security-Policy stops
 * before they leave are recorded from its violation reports too.
 */
const LOOPBACK = /^(https?|wss?):\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?\//;

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
}, scaled(60_000));

afterAll(async () => {
  await browser?.close();
});

describe('the docs page the local runtime serves (/docs/)', () => {
  it('renders the reference with every request to another host blocked, and attempts none', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const outside: string[] = [];
    const loaded: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (LOOPBACK.test(url) || url.startsWith('data:') || url.startsWith('blob:')) {
        loaded.push(url);
        return route.continue();
      }
      outside.push(url);
      return route.abort('blockedbyclient');
    });
    // a request the page's CSP refuses never reaches the router: the report names it
    await page.exposeFunction('__violation', (uri: string) => outside.push(`csp: ${uri}`));
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => (window as unknown as { __violation: (u: string) => void }).__violation(e.blockedURI));
    });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));

    const res = await page.goto(`${baseUrl()}/docs/`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-type']).toMatch(/^text\/html/);
    // the reference rendered: every family of the document in its navigation
    await page.locator('a[href="/secrets"]').first().waitFor({ timeout: 120_000 });
    const spec = await page.request.get(`${baseUrl()}/docs/openapi.json`);
    expect(spec.status()).toBe(200);
    const doc = (await spec.json()) as { openapi: string; tags: { name: string }[] };
    expect(doc.openapi).toMatch(/^3\.1/);
    const nav = await page.locator('a[href^="/"]').evaluateAll((els) => els.map((e) => e.getAttribute('href')));
    expect(nav).toEqual(expect.arrayContaining(doc.tags.map((t) => `/${t.name}`)));
    // time for what a page sends after it settles (a page-view beacon, lazy icons): it waits for the network to be idle
    await page.waitForLoadState('networkidle');
    expect(outside).toEqual([]);
    expect(errors).toEqual([]);
    expect(loaded.some((u) => u.endsWith('/docs/'))).toBe(true);
    await page.close();
  }, scaled(300_000));
});
