/**
 * The console's "Sign in" for an OAuth-protected tool server, in a real Chromium: the server waits for a sign-in,
 * the button opens the authorization server's page in a new tab (the fixture approves at once and sends the
 * browser to agentd's callback), and the panel shows the server connected.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOAuthFixture } from '../fixtures/mcp/oauth-server.js';
import { openBrowser, findChromium, type Browser } from '../support/browser.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';

const KEY = 'console-oauth-key-0123456789';
const chromiumPath = findChromium();

describe.skipIf(!chromiumPath)('console sign-in of an OAuth-protected tool server', () => {
  let fixture: Awaited<ReturnType<typeof startOAuthFixture>>;
  let svc: RunningApp;
  let browser: Browser;

  beforeAll(async () => {
    fixture = await startOAuthFixture();
    // The console holds the admin key: it is shown where to sign in.
    svc = await startApp({ server: { auth: { keys: [{ name: 'ops', key: KEY, scopes: ['admin'] }] } }, mcpServers: { secure: { type: 'http', baseUrl: fixture.url, oauth: {} } } });
    browser = await openBrowser(chromiumPath!);
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
    await fixture?.close();
  });

  it('shows "Sign in" while the server waits for one; after it, the server is connected', async () => {
    const { page } = browser;
    await page.goto(`${svc.url}/`);
    await page.getByLabel('API key').fill(KEY);
    await page.getByRole('button', { name: 'Use key' }).click();
    const server = page.locator('#server-secure');
    await server.locator('.status', { hasText: 'error' }).waitFor();
    const signIn = server.getByRole('link', { name: 'Sign in' });
    const [tab] = await Promise.all([page.context().waitForEvent('page'), signIn.click()]);
    await tab.getByText('is connected').waitFor();
    await tab.close();
    await server.locator('.status', { hasText: 'connected' }).waitFor();
    expect(await server.getByRole('link', { name: 'Sign in' }).count()).toBe(0);
    expect(fixture.stats.codeExchanges).toBe(1);
  });
});
