/**
 * The console's "Sign in" for an OAuth-protected tool server, in a real Chromium: the server waits for a sign-in,
 * the button opens the authorization server's page in a new tab (the fixture approves at once and sends the
 * browser to agentd's callback), and the panel shows the server connected. A server each principal signs in to
 * (`oauth.per: principal`) offers "Sign in as me": the caller's own sign-in, in a new tab the same way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOAuthFixture } from '../fixtures/mcp/oauth-server.js';
import { openBrowser, findChromium, type Browser } from '../support/browser.ts';
import { signIn, type ServerRec } from '../support/oauth.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';

const KEY = 'console-oauth-key-0123456789';
const CHAT = 'console-oauth-chat-0123456789';
const chromiumPath = findChromium();

describe.skipIf(!chromiumPath)('console sign-in of an OAuth-protected tool server', () => {
  let fixture: Awaited<ReturnType<typeof startOAuthFixture>>;
  let svc: RunningApp;
  let browser: Browser;

  beforeAll(async () => {
    fixture = await startOAuthFixture();
    // The console holds the admin key: it is shown where to sign in.
    const keys = [
      { name: 'ops', key: KEY, scopes: ['admin'] },
      { name: 'carol', key: CHAT, scopes: ['chat'] },
    ];
    svc = await startApp({
      server: { auth: { keys } },
      mcpServers: {
        secure: { type: 'http', baseUrl: fixture.url, oauth: {} },
        personal: { type: 'http', baseUrl: fixture.url, oauth: { per: 'principal' } },
      },
    });
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

  it('"Sign in as me" on a server each principal signs in to: the caller signs in for itself', async () => {
    const status = async () =>
      (await fetch(`${svc.url}/api/mcp/servers/personal/sign-in`, {
        headers: { authorization: `Bearer ${CHAT}` },
      }).then((r) => r.json())) as { signedIn: boolean };
    // The admin has signed the server itself in (its tool list); carol, in a tab of her own, signs in for herself.
    const servers = (await fetch(`${svc.url}/api/mcp/servers`, { headers: { authorization: `Bearer ${KEY}` } }).then(
      (r) => r.json(),
    )) as { servers: ServerRec[] };
    expect((await signIn(servers.servers.find((s) => s.name === 'personal')!.authorizationUrl!)).status).toBe(200);
    expect((await status()).signedIn).toBe(false);

    const page = await browser.page.context().newPage();
    await page.goto(`${svc.url}/`);
    await page.getByLabel('API key').fill(CHAT);
    await page.getByRole('button', { name: 'Use key' }).click();
    const server = page.locator('#server-personal');
    await server.locator('.status', { hasText: 'connected' }).waitFor();
    const [tab] = await Promise.all([
      page.context().waitForEvent('page'),
      server.getByRole('button', { name: 'Sign in as me' }).click(),
    ]);
    await tab.getByText('Signed in').first().waitFor();
    await tab.close();
    expect((await status()).signedIn).toBe(true);
    await page.close();
  });
});
