/**
 * The console answers a tool server's requests in a real Chromium: a question (elicitation), whose form
 * generated from server-everything's schema is filled and accepted, and a sampling request under
 * `sampling: ask`, shown and approved like a tool call; each tool result shows the answer. Against
 * server-everything over stdio and over Streamable HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEverythingHttp } from '../int/mcp-helpers.ts';
import { findChromium, useBrowserBench } from '../support/browser.ts';
import { everythingStdio } from '../support/messaging.ts';
import { PATIENT } from '../support/wait.ts';

const KEY = 'console-test-key-0123456789';
const chromiumPath = findChromium();

describe.skipIf(!chromiumPath).each(['stdio', 'Streamable HTTP'] as const)(
  'console elicitation in Chromium, server-everything over %s',
  (transport) => {
    let remote: Awaited<ReturnType<typeof startEverythingHttp>> | undefined;
    beforeAll(async () => {
      if (transport === 'Streamable HTTP') remote = await startEverythingHttp('streamableHttp');
    });
    afterAll(() => remote?.stop());
    const t = useBrowserBench(chromiumPath!, () => ({
      server: {
        auth: { keys: [{ name: 'operator', key: KEY, scopes: ['admin'] }] },
        limits: { rest: { points: 1000 } },
      },
      mcpServers: {
        everything: {
          ...(remote ? { type: 'http', baseUrl: `http://127.0.0.1:${remote.port}/mcp` } : everythingStdio),
          timeout: 60_000,
          sampling: 'ask',
        },
      },
    }));

    it('fills the form generated from the schema and accepts; the tool result shows the answer', async () => {
      const { page } = t.browser;
      await page.goto(`${t.svc.url}/`);
      await page.getByLabel('API key').fill(KEY);
      await page.getByRole('button', { name: 'Use key' }).click();
      await page.locator('#server-everything .status', { hasText: 'connected' }).waitFor();
      await page.getByLabel('Message').fill('Ask me [[tool:trigger-elicitation-request {}]]');
      await page.getByLabel('Message').press('Enter');
      const form = page.locator('form.elicitation');
      await form.waitFor();
      expect(await form.locator('select[name="untitledSingleSelectEnum"]').inputValue()).toBe('Monica'); // an enum, its default chosen
      await form.locator('input[name="name"]').fill('Grace Hopper');
      await form.locator('input[name="check"]').check();
      await form.locator('input[name="integer"]').fill('12');
      if (!remote) await t.browser.screenshot('console-elicitation');
      await form.getByRole('button', { name: 'Accept' }).click();
      await page.locator('form.elicitation', { hasText: 'Answered: accept by operator (websocket)' }).waitFor();
      await expect
        .poll(() => page.locator('.tool .result').last().textContent(), PATIENT)
        .toContain('Name: Grace Hopper');
    });

    it('shows a sampling request waiting for approval like a tool call; Approve lets the model answer the server', async () => {
      const { page } = t.browser;
      await page
        .getByLabel('Message')
        .fill('Sample [[tool:trigger-sampling-request {"prompt":"console-yak","maxTokens":20}]]');
      await page.getByLabel('Message').press('Enter');
      const asked = page.locator('.tool', { hasText: 'sampling/createMessage' }).last();
      const box = asked.locator('.approval');
      await box.getByRole('button', { name: 'Approve' }).waitFor();
      expect(await asked.locator('.args').textContent()).toContain('console-yak');
      if (!remote) await t.browser.screenshot('console-sampling-approval');
      await box.getByRole('button', { name: 'Approve' }).click();
      await box.locator('.approved', { hasText: 'Approved by operator (websocket)' }).waitFor();
      await expect
        .poll(
          () => page.locator('.tool', { hasText: 'trigger-sampling-request' }).locator('.result').last().textContent(),
          PATIENT,
        )
        .toContain('LLM sampling result');
    });
  },
);
