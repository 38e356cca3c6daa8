/**
 * The web console in a real Chromium: the key prompt, a streamed reply, a tool call with its
 * result, a tool server connected from the panel, a tool run from its form, a session switch
 * that replays history, and the phone-width layout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { openBrowser, findChromium, type Browser } from '../support/browser.ts';
import { fixturePath } from '../support/paths.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { PATIENT } from '../support/wait.ts';

const KEY = 'console-test-key-0123456789';
const chromiumPath = findChromium();

describe.skipIf(!chromiumPath)('web console in Chromium', () => {
  let sim: Simulator;
  let svc: RunningApp;
  let browser: Browser;

  beforeAll(async () => {
    sim = await startSimulator();
    svc = await startApp(
      {
        server: { auth: { apiKey: KEY } },
        mcpServers: { echo: { type: 'stdio', command: process.execPath, args: [fixturePath('echo-server')] } },
        toolPolicy: { rules: [{ server: 'echo', tool: 'big', action: 'ask' }] },
      },
      { modelUrl: sim.url },
    );
    browser = await openBrowser(chromiumPath!);
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
    await sim?.close();
  });

  it('asks for the API key, then shows the agent ready with its tool server', async () => {
    const { page } = browser;
    await page.goto(`${svc.url}/`);
    await page.getByLabel('API key').fill(KEY);
    await page.getByRole('button', { name: 'Use key' }).click();
    await page.locator('#server-echo .status', { hasText: 'connected' }).waitFor();
    await page.reload(); // the key stays for the tab: no prompt again
    await expect.poll(() => page.locator('#status').textContent(), PATIENT).toMatch(/ready · 1 tool server/);
    expect(await page.locator('#key-form').isHidden()).toBe(true);
    expect(await page.content()).not.toContain(KEY);
  });

  it('streams a reply into the transcript', async () => {
    const { page } = browser;
    await page.locator('#server-echo .status', { hasText: 'connected' }).waitFor();
    await page.getByLabel('Message').fill('Hello console [[len:40]]');
    await page.getByLabel('Message').press('Enter');
    await page.locator('.user', { hasText: 'Hello console' }).waitFor();
    const reply = page.locator('.assistant[data-done="true"]').last();
    await reply.waitFor();
    expect((await reply.textContent())?.length).toBeGreaterThan(20);
    await browser.screenshot('console-reply');
  });

  it('shows a tool call and its result as they happen', async () => {
    const { page } = browser;
    await page.getByLabel('Message').fill('Echo please [[tool:echo {"message":"from the browser"}]]');
    await page.getByRole('button', { name: 'Send' }).click();
    const call = page.locator('.tool', { hasText: 'echo' }).last();
    await call.locator('.result').waitFor();
    expect(await call.textContent()).toContain('from the browser');
    expect(await call.locator('.result').textContent()).toContain('fixture echo: from the browser');
    await page.locator('.assistant[data-done="true"]', { hasText: 'fixture echo: from the browser' }).waitFor();
    await browser.screenshot('console-tool-call');
  });

  it('shows a call waiting for approval with its arguments; Approve runs it and the turn ends', async () => {
    const { page } = browser;
    await page.getByLabel('Message').fill('Needs a yes [[tool:big {"bytes":12}]]');
    await page.getByRole('button', { name: 'Send' }).click();
    const call = page.locator('.tool', { hasText: 'big' }).last();
    const box = call.locator('.approval');
    await box.getByRole('button', { name: 'Approve' }).waitFor();
    expect(await call.locator('.args').textContent()).toContain('"bytes": 12');
    expect(await box.textContent()).toMatch(/Waiting for approval/);
    await browser.screenshot('console-approval');
    await box.getByRole('button', { name: 'Approve' }).click();
    await box.locator('.approved', { hasText: 'Approved (websocket)' }).waitFor();
    await call.locator('.result').waitFor();
    await page.locator('.assistant[data-done="true"]', { hasText: 'Tool big returned' }).waitFor();
    const pending = await page.evaluate(async (key) => (await (await fetch('/api/sessions/default/approvals', { headers: { Authorization: `Bearer ${key}` } })).json()) as { approvals: unknown[] }, KEY);
    expect(pending.approvals).toEqual([]);
  });

  it('attaches an image and cancels a running turn', async () => {
    const { page } = browser;
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
    await page.setInputFiles('#image', { name: 'dot.png', mimeType: 'image/png', buffer: png });
    await page.getByLabel('Message').fill('What is in this picture? [[image]]');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('.user', { hasText: '[image attached]' }).waitFor();
    await page.locator('.assistant[data-done="true"]', { hasText: 'an image (image/png, 70 bytes)' }).waitFor();

    await page.getByLabel('Message').fill('Take your time [[stall:5000]]');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('.user', { hasText: 'Take your time' }).waitFor();
    await page.getByRole('button', { name: 'Cancel turn' }).click();
    await page.locator('.error', { hasText: 'cancelled' }).waitFor();
  });

  it('connects a tool server from the panel and runs one of its tools from the form', async () => {
    const { page } = browser;
    await page.getByText('Connect a server').click();
    await page.getByLabel('Name').fill('second');
    await page.getByLabel('Command (stdio) or URL (http)').fill(process.execPath);
    await page.getByLabel('Arguments, one per line (stdio)').fill(fixturePath('echo-server'));
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await page.locator('#connect-result', { hasText: 'second: connected' }).waitFor();
    const second = page.locator('#server-second');
    await second.locator('.status', { hasText: 'connected' }).waitFor();
    await second.getByText('Tools').click();
    await second.getByText('echo', { exact: true }).click();
    await second.getByLabel(/^message \*/).fill('run from a form');
    await second.getByRole('button', { name: 'Run echo' }).click();
    await expect.poll(() => second.locator('.tool-output').first().textContent(), PATIENT).toContain('fixture echo: run from a form');
    await browser.screenshot('console-servers');
  });

  it('switches sessions and replays a session history from the log', async () => {
    const { page } = browser;
    await page.getByLabel('New session').fill('other');
    await page.getByRole('button', { name: 'Open' }).click();
    await expect.poll(() => page.locator('#transcript li').count(), PATIENT).toBe(0);
    await page.getByRole('button', { name: 'default' }).click();
    await page.locator('.user', { hasText: 'Hello console' }).waitFor();
    await page.locator('.tool .result', { hasText: 'fixture echo: from the browser' }).waitFor();
    expect(await page.locator('.assistant').count()).toBeGreaterThanOrEqual(2);
  });

  it('fits a phone-width screen', async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 390, height: 844 });
    // A string runs in the page, whose DOM types this Node project does not load.
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await browser.screenshot('console-phone');
  });
});
