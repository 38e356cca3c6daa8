/**
 * A message typed before the console's socket opens (issue 81 item 6): the page asks `/api/health` before it opens
 * the socket, and the test holds that request, so Enter is pressed while no socket exists; the message leaves the box,
 * the status says it waits, and once the request goes through and the link opens it is sent (once) and answered.
 */
import type { Route } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { findChromium, useBrowserBench, watchFailures } from '../support/browser.ts';
import { PATIENT } from '../support/wait.ts';

const KEY = 'console-early-key-0123456789';
const chromiumPath = findChromium();

describe.skipIf(!chromiumPath)('console: a message sent before the socket opens', () => {
  const t = useBrowserBench(chromiumPath!, {
    server: { auth: { keys: [{ name: 'operator', key: KEY, scopes: ['admin'] }] }, limits: { rest: { points: 1000 } } },
  });

  it('is queued, then sent once the link opens, and answered', async () => {
    const { page } = t.browser;
    const failures = watchFailures(page);
    await page.addInitScript(`sessionStorage.setItem('agentd.apiKey', ${JSON.stringify(KEY)})`);
    // The page's first health check (what it waits for before it opens the socket) is held until released.
    let held!: (route: Route) => void;
    const heldRoute = new Promise<Route>((resolve) => (held = resolve));
    await page.route('**/api/health', (route) => held(route), { times: 1 });
    await page.goto(`${t.svc.url}/#session=early`);
    const route = await heldRoute; // the console's script ran (the composer is bound); no socket yet
    const box = page.getByLabel('Message');
    await box.fill('Typed at once [[reply:heard you]]');
    await box.press('Enter');
    await expect.poll(() => box.inputValue(), PATIENT).toBe('');
    expect(await page.locator('#status').textContent()).toBe('not connected yet: the message goes once connected');
    expect(await page.locator('.user').count()).toBe(0);
    await route.continue();
    await page.locator('.assistant[data-done="true"]', { hasText: 'heard you' }).waitFor({ timeout: PATIENT.timeout });
    expect(await page.locator('.user').allTextContents()).toEqual(['Typed at once [[reply:heard you]]']);
    expect(failures.list()).toEqual([]);
    failures.stop();
  });
});
