/** The API docs page in a real Chromium: it loads /api/openapi.json offline, lists every operation, and offers each route's example as its Try-it body. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChromium, openBrowser, type Browser } from '../support/browser.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';

const chromiumPath = findChromium();

describe.skipIf(!chromiumPath)('API docs page in Chromium', () => {
  let svc: RunningApp;
  let browser: Browser;
  beforeAll(async () => {
    svc = await startApp({ server: { auth: { apiKey: 'docs-page-key-0123456789' } } });
    browser = await openBrowser(chromiumPath!);
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('shows every operation of the document, with no request leaving this origin', async () => {
    const { page } = browser;
    const foreign: string[] = [];
    const failures: string[] = [];
    page.on('request', (r) => !r.url().startsWith(svc.url) && !r.url().startsWith('data:') && foreign.push(r.url()));
    page.on('console', (m) => m.type() === 'error' && failures.push(m.text()));
    await page.goto(`${svc.url}/api/docs`);
    await page.locator('.opblock-summary-path', { hasText: '/api/message-sync' }).first().waitFor();
    const doc = (await (await fetch(`${svc.url}/api/openapi.json`)).json()) as {
      paths: Record<string, object>;
      tags: { name: string }[];
    };
    const operations = Object.values(doc.paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
    expect(await page.locator('.opblock').count()).toBe(operations);
    // Grouped by the document's tags, in its order (none under swagger-ui's "default").
    expect(await page.locator('h3.opblock-tag').evaluateAll((hs) => hs.map((h) => h.getAttribute('data-tag')))).toEqual(
      doc.tags.map((t) => t.name),
    );
    expect(await page.locator('.btn.authorize').count()).toBe(1); // the key scheme is offered
    await browser.screenshot('api-docs');
    expect(foreign).toEqual([]);
    expect(failures).toEqual([]);
  });

  it("offers the route's example as the default Try-it body (message-sync's is one agentd accepts)", async () => {
    const { page } = browser;
    const doc = (await (await fetch(`${svc.url}/api/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { requestBody: { content: Record<string, { example: unknown }> } }>>;
    };
    await page.goto(`${svc.url}/api/docs`);
    const op = page.locator('.opblock', {
      has: page.locator('.opblock-summary-path', { hasText: /^\/api\/message-sync$/ }),
    });
    await op.locator('.opblock-summary').click();
    await op.locator('.try-out__btn').click();
    const body = JSON.parse(await op.locator('textarea.body-param__text').inputValue()) as unknown;
    expect(body).toEqual(doc.paths['/api/message-sync']!.post!.requestBody.content['application/json']!.example);
    expect(body).toEqual({ message: 'Hello', sessionId: 'default' });
  });
});
