/**
 * The web console in a real Chromium: the key prompt, a streamed reply, a tool call with its
 * result shown as text, a tool server connected from the panel, a tool run from its form, a
 * session switch that replays history, the layout (fixed header and composer, the transcript
 * scrolling in its pane, opened at its newest message), the phone-width layout, a load without
 * any failed request, each session's token usage, a compaction asked for from the console (a
 * collapsible entry with its figures and summary). agentd restarted under the page:
 * console-restart.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { converse, openBrowser, findChromium, watchFailures, type Browser } from '../support/browser.ts';
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
        server: {
          auth: { keys: [{ name: 'operator', key: KEY, scopes: ['admin'] }] }, // the console's user connects servers: an admin key
          // One IP drives it all within a minute (the page's loads and list reloads, the tests' own
          // requests): more than the default 100 REST requests a minute a person at a console makes.
          limits: { rest: { points: 1000 } },
        },
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
    await box.locator('.approved', { hasText: 'Approved by operator (websocket)' }).waitFor();
    await call.locator('.result').waitFor();
    await page.locator('.assistant[data-done="true"]', { hasText: 'Tool big returned' }).waitFor();
    const pending = await page.evaluate(
      async (key) =>
        (await (
          await fetch('/api/sessions/default/approvals', { headers: { Authorization: `Bearer ${key}` } })
        ).json()) as { approvals: unknown[] },
      KEY,
    );
    expect(pending.approvals).toEqual([]);
  });

  it('attaches an image and cancels a running turn', async () => {
    const { page } = browser;
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
      'base64',
    );
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
    await expect
      .poll(() => second.locator('.tool-output').first().textContent(), PATIENT)
      .toContain('fixture echo: run from a form');
    await browser.screenshot('console-servers');
  });

  it("shows a tool result's text content as text, not as MCP JSON", async () => {
    const { page } = browser;
    const result = page.locator('.tool .result', { hasText: 'fixture echo: from the browser' }).last();
    expect(await result.locator('.text').textContent()).toBe('fixture echo: from the browser');
    expect(await result.textContent()).not.toMatch(/"type"|"content"|\\"/);
  });

  it('loads with the key in the tab without a failed request or a console error', async () => {
    const { page } = browser;
    const failures = watchFailures(page);
    await page.reload();
    await expect.poll(() => page.locator('#status').textContent(), PATIENT).toMatch(/ready · \d tool server/);
    await page.locator('.assistant[data-done="true"]').last().waitFor();
    await page.locator('#server-echo .status', { hasText: 'connected' }).waitFor();
    expect(failures.list()).toEqual([]);
    failures.stop();
  });

  it('keeps the header and the composer in view over a long transcript, which opens at its newest message', async () => {
    const { page } = browser;
    for (let i = 1; i <= 12; i++) {
      const res = await fetch(`${svc.url}/api/message-sync`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${KEY}` },
        body: JSON.stringify({
          sessionId: 'long',
          message: `Line ${i} [[reply:Answer number ${i}, with enough words to take a line or two of the transcript pane.]]`,
        }),
      });
      expect(res.status).toBe(200);
    }
    await page.goto(`${svc.url}/#session=long`);
    await page.reload(); // a fresh load of that session, as a bookmark opens it
    const last = page.locator('.assistant', { hasText: 'Answer number 12,' });
    await last.waitFor();
    // Positions are read in the page (a string runs there, whose DOM types this Node project does not load).
    const layout = () =>
      page.evaluate<{
        pageScrolls: boolean;
        paneScrolls: boolean;
        header: boolean;
        composer: boolean;
        lastVisible: boolean;
      }>(`(() => {
        const inView = (el) => { const r = el.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; };
        const pane = document.getElementById('transcript');
        const p = pane.getBoundingClientRect();
        const items = pane.querySelectorAll('li');
        const l = items[items.length - 1].getBoundingClientRect();
        return {
          pageScrolls: document.documentElement.scrollHeight > innerHeight,
          paneScrolls: pane.scrollHeight > pane.clientHeight,
          header: inView(document.querySelector('header')),
          composer: inView(document.getElementById('composer')),
          lastVisible: l.bottom <= p.bottom + 1 && l.top >= p.top - 1,
        };
      })()`);
    await expect
      .poll(layout, PATIENT)
      .toEqual({ pageScrolls: false, paneScrolls: true, header: true, composer: true, lastVisible: true });
    expect(await page.locator('.user', { hasText: /^Line 1 \[\[/ }).count()).toBe(1);
    await browser.screenshot('console-long');
    // `default` reaches every connection live: a frame of it folded while another session is shown
    // does not stand for its history, which opening it replays whole.
    const sent = await fetch(`${svc.url}/api/message-sync`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ message: 'While away [[reply:Noted while away]]' }),
    });
    expect(sent.status).toBe(200);
    await page.getByRole('button', { name: 'default' }).click();
    await page.locator('.assistant', { hasText: 'Noted while away' }).waitFor();
    await page.locator('.user', { hasText: 'Hello console' }).waitFor();
    expect(await page.locator('.assistant', { hasText: 'Noted while away' }).count()).toBe(1);
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

  it("shows each session's token usage, and a compaction asked for with Compact history as a collapsible summary with its figures", async () => {
    const { page } = browser;
    await page.getByLabel('New session').fill('compacting');
    await page.getByRole('button', { name: 'Open' }).click();
    await expect.poll(() => page.locator('#transcript li').count(), PATIENT).toBe(0);
    const used = async () =>
      Number(
        (
          /Used ([\d,]+) tokens/.exec((await page.locator('#session-usage').textContent()) ?? '')?.[1] ?? '0'
        ).replaceAll(',', ''),
      );
    for (const [i, word] of ['first', 'second', 'third'].entries()) {
      const before = await used();
      await converse(
        page,
        `The ${word} message of a conversation about compaction, ${'with words to summarise '.repeat(20)}`,
        `Answer ${i + 1} about compaction`,
      );
      await expect.poll(used, PATIENT).toBeGreaterThan(before); // the shown session's usage follows each reply
    }
    expect(await page.locator('#session-usage').textContent()).toMatch(
      /^Used [\d,]+ tokens \([\d,]+ prompt \+ [\d,]+ completion\)$/,
    );
    const listed = page.locator('#sessions li', { has: page.getByRole('button', { name: 'compacting' }) });
    await expect
      .poll(() => listed.locator('.usage').textContent(), PATIENT)
      .toBe(`${(await used()).toLocaleString('en')} tokens`);

    const compact = page.getByRole('button', { name: 'Compact history' });
    expect(await compact.isEnabled()).toBe(true);
    const beforeCompaction = await used();
    await compact.click();
    const entry = page.locator('#transcript li.compaction');
    await entry.waitFor();
    expect(await entry.locator('summary').textContent()).toMatch(
      /^History compacted: summary, manual · [\d,]+ → [\d,]+ tokens$/,
    );
    const [, from, to] = /([\d,]+) → ([\d,]+)/
      .exec((await entry.locator('summary').textContent())!)!
      .map((n) => Number(n.replaceAll(',', '')));
    expect(to).toBeLessThan(from!);
    // Collapsed: the summary text shows once opened.
    const text = entry.locator('.summary-text');
    expect(await text.isVisible()).toBe(false);
    await entry.locator('summary').click();
    await expect.poll(() => text.isVisible(), PATIENT).toBe(true);
    expect(await text.textContent()).toMatch(/^Summary of \d+ user messages/);
    expect(await entry.locator('.meta').textContent()).toMatch(
      /^Events up to #\d+ are summarised in the model's view; this transcript keeps them\. The summary took [\d,]+ tokens\.$/,
    );
    await browser.screenshot('console-compaction');
    // The summary's request counts in the session's usage; every message is still shown.
    await expect.poll(used, PATIENT).toBeGreaterThan(beforeCompaction);
    expect(await page.locator('#transcript li.user').count()).toBe(3);
    // The next turn goes on after it; a reload replays the compaction once, in its place.
    await converse(page, 'After the compaction', 'Answer 4 after it');
    const classes = () => page.locator('#transcript li').evaluateAll((lis) => lis.map((li) => li.className));
    const order = await classes();
    expect(order).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
      'compaction',
      'user',
      'assistant',
    ]);
    await page.reload();
    await page.locator('.assistant', { hasText: 'Answer 4 after it' }).waitFor();
    expect(await classes()).toEqual(order);
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
