/**
 * The CopilotKit example (examples/ag-ui-copilotkit) in a real Chromium, offline, started as its README
 * says: the one command `npm run example:ag-ui` (the launcher: the simulator, agentd with the example's
 * agent.yml, and the page on Vite, on free ports), the page opened at the address it prints. The page
 * talks to the agentd the launcher started, which it learned from the launcher. A reply streams into the
 * chat; a call to server-everything's `echo` (under an `ask` rule) ends the run with an interrupt the
 * page shows, and Approve resumes it: the tool's result and the final answer show (Deny: the model goes
 * on without it). A call of `show_counter` shows its MCP App in the chat, rendered by CopilotKit's own MCP Apps
 * renderer from agentd's `mcp-apps` activity; the app's own tool call reaches agentd as a proxied run. test/int/ag-ui-example-launcher.test.ts holds the launcher's own contract (signals,
 * a child that dies, no process left).
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChromium, openBrowser, watchFailures, type Browser } from '../support/browser.ts';
import { FIRST_START_MS, startExample, type RunningExample } from '../support/copilotkit-example.ts';
import { PATIENT } from '../support/wait.ts';

const chromiumPath = findChromium();

describe.skipIf(!chromiumPath)('the CopilotKit example page against the AG-UI face, in Chromium', () => {
  let example: RunningExample | undefined;
  let browser: Browser | undefined;
  let failures: ReturnType<typeof watchFailures> | undefined;

  beforeAll(async () => {
    example = await startExample();
    browser = await openBrowser(chromiumPath!);
    failures = watchFailures(browser.page);
    // Vite serves the page's modules one by one, transformed on first request: on a busy machine the first load
    // takes longer than a page load's default 30 s, so it gets the launcher's own first-start bound.
    await browser.page.goto(example.pageUrl, { timeout: FIRST_START_MS });
  }, FIRST_START_MS);
  afterAll(async () => {
    await browser?.close();
    example?.child.kill('SIGINT');
    await example?.exited;
  });

  it('opens on the agentd the launcher started', async () => {
    const shown = browser!.page.getByText('Talking to');
    await expect.poll(() => shown.textContent(), PATIENT).toBe(`Talking to ${example!.agentdUrl}/ag-ui`);
  });

  it('sends a message; the reply streams into the chat', async () => {
    const page = browser!.page;
    const reply = 'one two three four five six seven eight';
    await page.evaluate(RECORD_REPLIES);
    await send(page, `Hello agentd [[reply:${reply}]] [[rate:8]]`);
    await answered(page, reply, example!);
    // Shown piece by piece as agentd streamed it, not all at once at the end.
    const shown = await page.evaluate<string[]>('window.shownReplies');
    expect(shown.filter((text) => text !== reply && reply.startsWith(text))).not.toEqual([]);
    expect(shown.at(-1)).toBe(reply);
    expect(failures!.list()).toEqual([]);
  });

  it('asks before echo runs; Approve resumes the run, and the tool result and the final answer show', async () => {
    const page = browser!.page;
    await send(page, 'Say it back [[tool:echo {"message":"from the page"}]] [[reply:The echo tool answered.]]');
    const approval = page.getByRole('region', { name: 'Approval' });
    await approval.getByRole('button', { name: 'Approve' }).waitFor({ timeout: PATIENT.timeout });
    const call = page.getByRole('region', { name: 'Tool call echo' }).last();
    expect(await call.locator('.tool-call-args').textContent()).toContain('from the page');
    expect(await call.getAttribute('data-status')).not.toBe('complete');
    await browser!.screenshot('copilotkit-example-approval');

    await approval.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => call.locator('.tool-call-result').textContent(), PATIENT).toContain('Echo: from the page');
    await answered(page, 'The echo tool answered.', example!);
    await expect(approval.count()).resolves.toBe(0);
    expect(failures!.list()).toEqual([]);
  });

  it('Deny answers the interrupt too: echo never runs, and the model goes on without it', async () => {
    const page = browser!.page;
    await send(page, 'Not this [[tool:echo {"message":"never echoed"}]] [[reply:Understood, no echo.]]');
    const approval = page.getByRole('region', { name: 'Approval' });
    await approval.getByRole('button', { name: 'Deny' }).click({ timeout: PATIENT.timeout });
    await answered(page, 'Understood, no echo.', example!);
    const call = page.getByRole('region', { name: 'Tool call echo' }).last();
    expect(await call.locator('.tool-call-args').textContent()).toContain('never echoed');
    expect(await call.locator('.tool-call-result').textContent()).not.toContain('Echo: never echoed');
    expect(failures!.list()).toEqual([]);
  });

  it('a tool that brings an MCP App: after the call, CopilotKit’s renderer shows the app with its input and result', async () => {
    const page = browser!.page;
    await send(page, 'Count [[tool:show_counter {"start":1}]] [[reply:Here is a counter.]]');
    await answered(page, 'Here is a counter.', example!);
    // CopilotKit's MCP Apps renderer: its sandbox proxy (a srcdoc iframe), the app's html inside it, fetched with
    // the app's proxied resources/read run (the html agentd kept with the call), then the bridge: initialize, the
    // call's input and result from agentd's activity.
    await page.getByTestId('mcp-app-iframe').waitFor({ timeout: PATIENT.timeout });
    const app = page.frameLocator('[data-testid="mcp-app-iframe"]').frameLocator('iframe');
    const text = (id: string) => () => app.locator(`#${id}`).textContent({ timeout: PATIENT.timeout });
    await expect.poll(text('host'), PATIENT).toBe('host: CopilotKit MCP Apps Host');
    await expect.poll(text('input'), PATIENT).toBe('input: {"start":1}');
    await expect.poll(text('count'), PATIENT).toBe('count: 1');
    // Add one: the app's tools/call comes to agentd as a proxied run, never straight to the tool server; agentd runs
    // it under its tool policy (agent.appToolCall) and the app shows the tool's answer.
    await app.getByRole('button', { name: 'Add one' }).click();
    await expect.poll(text('called'), PATIENT).toBe('called: counter at 2');
    await browser!.screenshot('copilotkit-example-mcp-app');
    expect(failures!.list()).toEqual([]);
  });
});

/** Records, in the page, each text the chat's last assistant message shows (`window.shownReplies`). */
const RECORD_REPLIES = `(() => {
  const shown = (window.shownReplies = []);
  new MutationObserver(() => {
    const all = document.querySelectorAll('[data-testid="copilot-assistant-message"]');
    const text = all[all.length - 1]?.textContent?.trim();
    if (text && shown.at(-1) !== text) shown.push(text);
  }).observe(document.body, { subtree: true, childList: true, characterData: true });
})()`;

/** Types a message into CopilotKit's chat input and sends it with Enter. */
async function send(page: Page, text: string): Promise<void> {
  const input = page.getByTestId('copilot-chat-textarea');
  await input.fill(text);
  await input.press('Enter');
}

/**
 * Waits for an assistant message holding `text`, then until the chat has no run going. When it does not come, the
 * failure shows what the chat shows and the launcher's last output (agentd's and Vite's logs).
 */
async function answered(page: Page, text: string, example: RunningExample): Promise<void> {
  try {
    await page.getByTestId('copilot-assistant-message').filter({ hasText: text }).waitFor({ timeout: PATIENT.timeout });
    await page
      .locator('[data-testid="copilot-chat"][data-copilot-running="false"]')
      .waitFor({ timeout: PATIENT.timeout });
  } catch (e) {
    const chat = await page
      .getByTestId('copilot-chat')
      .innerText({ timeout: 1_000 })
      .catch(() => '(unreadable)');
    throw new Error(
      `${e instanceof Error ? e.message : String(e)}\n--- the chat shows:\n${chat}\n--- the launcher printed last:\n${example.output().slice(-6_000)}`,
    );
  }
}
