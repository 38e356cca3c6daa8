/**
 * The console as an MCP Apps host in a real Chromium, against the fixture app server over stdio
 * (test/fixtures/mcp/app-server.js, its `show_panel` app speaking the bridge by hand) and the model simulator: the app
 * shows in the transcript after the tool call, in the sandbox proxy's frame (another, opaque origin) under a bounded
 * height, with its tool input, result and host context; its `ui/message` is a user message that runs a turn; it can
 * read neither the console's storage nor its document nor agentd's API; malformed bridge messages get JSON-RPC errors
 * and the console keeps working; a reload renders it again from history; its `tools/call` reaches the app-calls route.
 */
import type { FrameLocator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { converse, findChromium, useBrowserBench, watchFailures } from '../support/browser.ts';
import { fixturePath } from '../support/paths.ts';
import { PATIENT } from '../support/wait.ts';

const KEY = 'console-apps-key-0123456789';
const chromiumPath = findChromium();
const SESSION = 'apps';

describe.skipIf(!chromiumPath)('console: MCP Apps in Chromium', () => {
  const t = useBrowserBench(chromiumPath!, {
    server: { auth: { keys: [{ name: 'operator', key: KEY, scopes: ['admin'] }] }, limits: { rest: { points: 1000 } } },
    // The app's second tool waits for a person's approval (the console's approval UI shows it).
    toolPolicy: { default: 'allow', rules: [{ tool: 'refresh_chart', action: 'ask' }] },
    mcpServers: {
      apps: { type: 'stdio', command: process.execPath, args: [fixturePath('app-server')], timeout: 20_000 },
    },
  });

  /** The app's own document: the frame the sandbox proxy made inside the console's frame. */
  const appOf = (page: Page): FrameLocator => page.frameLocator('.tool .app-frame').first().frameLocator('iframe');
  const text = (app: FrameLocator, id: string) => app.locator(`#${id}`).textContent();

  async function open(page: Page) {
    await page.goto(`${t.svc.url}/#session=${SESSION}`);
    // A fresh context: the console asks for the key (and keeps it in the tab's sessionStorage).
    await page.getByLabel('API key').fill(KEY);
    await page.getByRole('button', { name: 'Use key' }).click();
    await page.locator('#server-apps .status', { hasText: 'connected' }).waitFor();
  }

  it('shows the app after the tool call, sandboxed on another origin, with its input, result and host context', async () => {
    const { page } = t.browser;
    await open(page);
    const failures = watchFailures(page);
    await page.getByLabel('Message').fill('Panel please [[tool:show_panel {"series":"p"}]]');
    await page.getByLabel('Message').press('Enter');
    const frame = page.locator('.tool .app-frame').first();
    await frame.waitFor();
    expect(await frame.getAttribute('sandbox')).toBe('allow-scripts allow-forms');
    const app = appOf(page);
    await expect.poll(() => text(app, 'input'), PATIENT).toBe('input: {"series":"p"}');
    await expect.poll(() => text(app, 'result'), PATIENT).toBe('result: {"series":"p"}');
    expect(await text(app, 'host')).toBe('host: agentd console, inline, web');
    // The app asked for 5000 px: the frame grows to the bound, no further.
    await expect.poll(async () => (await frame.boundingBox())?.height ?? 0, PATIENT).toBe(640);
    // The proxy's address names no key; its document has an opaque origin (the CSP's sandbox), as has the app's.
    const proxy = page.frames().find((f) => f.url().includes('/console/apps/sandbox'));
    expect(proxy?.url()).not.toContain(KEY);
    expect(await proxy!.evaluate<string>('window.origin')).toBe('null');
    expect(page.frames().every((f) => !f.url().includes(KEY))).toBe(true);
    await t.browser.screenshot('console-apps');
    expect(failures.list()).toEqual([]);
    failures.stop();
  });

  it("cannot read the console's storage or document, nor reach agentd", async () => {
    const { page } = t.browser;
    expect(await page.evaluate<number>('sessionStorage.length')).toBeGreaterThan(0); // the key the console keeps
    const app = appOf(page);
    await app.getByRole('button', { name: 'Probe' }).click();
    await expect.poll(() => text(app, 'probed'), PATIENT).not.toBe('probe: none');
    const probed = (await text(app, 'probed'))!;
    expect(probed).toBe(
      'probe: localStorage SecurityError; sessionStorage SecurityError; parent.document SecurityError; top.document SecurityError; fetch TypeError',
    );
  });

  it('sends its ui/message as a user message of the session, and a turn runs', async () => {
    const { page } = t.browser;
    const app = appOf(page);
    await app.getByRole('button', { name: 'Say hello' }).click();
    await page.locator('.user', { hasText: 'Hello from the panel' }).waitFor();
    await page.locator('.assistant[data-done="true"]', { hasText: 'panel heard' }).waitFor();
    expect(await text(app, 'said')).toBe('said: {}');
    const res = await fetch(`${t.svc.url}/api/sessions/${SESSION}/history`, {
      headers: { Authorization: `Bearer ${KEY}` },
    });
    const { events } = (await res.json()) as { events: { event: string; data: { content?: string } }[] };
    expect(events.filter((e) => e.event === 'userMessage').map((e) => e.data.content)).toContain(
      'Hello from the panel [[reply:panel heard]]',
    );
  });

  it('answers malformed bridge messages with JSON-RPC errors, and the console keeps working', async () => {
    const { page } = t.browser;
    const failures = watchFailures(page);
    const app = appOf(page);
    await app.getByRole('button', { name: 'Send junk' }).click();
    // Method not found; a tools/call without a name (the package's params check answers it -32603, internal error);
    // invalid request (neither request nor response: the console's own check).
    await expect.poll(() => text(app, 'errors'), PATIENT).toMatch(/^errors: -32601,-3260[23],-32600$/);
    await converse(page, 'Still there?', 'still here');
    expect(await text(app, 'input')).toBe('input: {"series":"p"}'); // the app too
    // ext-apps' transport logs the message it could not parse (console.error); nothing else went wrong.
    expect(failures.list().filter((f) => !f.startsWith('console error: Failed to parse message'))).toEqual([]);
    failures.stop();
  });

  it('renders the app again after a reload, from the history', async () => {
    const { page } = t.browser;
    await page.reload();
    await page.locator('.assistant[data-done="true"]', { hasText: 'still here' }).waitFor();
    const app = appOf(page);
    await expect.poll(() => text(app, 'input'), PATIENT).toBe('input: {"series":"p"}');
    await expect.poll(() => text(app, 'result'), PATIENT).toBe('result: {"series":"p"}');
    expect(await page.locator('.tool .app-frame').count()).toBe(1);
  });

  it('shows the note agentd kept beside the result of a tool whose app is missing or not an app (the result intact)', async () => {
    const { page } = t.browser;
    await converse(
      page,
      'Notes please [[tool:show_missing {"series":"m"}]] [[tool:show_text {"series":"t"}]]',
      'noted',
    );
    const entry = (tool: string) => page.locator('.tool', { hasText: tool });
    await expect
      .poll(() => entry('show_missing').locator('.result').textContent(), PATIENT)
      .toContain('show_missing: m');
    expect(await entry('show_missing').locator('.app-note').textContent()).toMatch(
      /^No app shown: its resource ui:\/\/fixture\/missing\.html could not be read/,
    );
    expect(await entry('show_text').locator('.result').textContent()).toContain('show_text: t');
    expect(await entry('show_text').locator('.app-note').textContent()).toBe(
      'No app shown: its resource is text/plain, not text/html;profile=mcp-app',
    );
    expect(await entry('show_text').locator('.app-note').isVisible()).toBe(true);
    expect(await entry('show_text').locator('.app-frame').count()).toBe(0);
  });

  it("answers a tools/call the app-calls route refuses with a JSON-RPC error carrying the route's message", async () => {
    const app = appOf(t.browser.page);
    await app.getByRole('button', { name: 'Call unknown' }).click();
    await expect.poll(() => text(app, 'unknown-called'), PATIENT).toMatch(/^unknown: error -32603 \S/);
  });

  it("calls a second tool through the bridge; its approval shows in the console, and approved, the app shows that tool's result", async () => {
    const { page } = t.browser;
    const app = appOf(page);
    await app.getByRole('button', { name: 'Refresh' }).click();
    // The call waits for an approval: the transcript shows it, in view, and the app's frame says it waits.
    const waiting = page.locator('.tool', { hasText: 'refresh_chart' }).locator('.approval button.approve');
    await waiting.waitFor();
    await expect.poll(() => waiting.isVisible(), PATIENT).toBe(true);
    expect(await page.locator('.tool .app .app-note').first().textContent()).toMatch(/^Calling refresh_chart/);
    expect(await text(app, 'called')).toBe('called: none');
    await waiting.click();
    await expect.poll(() => text(app, 'called'), PATIENT).toMatch(/^called: refresh_chart: b/);
    expect(await page.locator('.tool .app .app-note').first().isHidden()).toBe(true);
  });
});
