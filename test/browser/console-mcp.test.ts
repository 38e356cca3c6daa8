/**
 * The console's MCP resources and prompts, and the inspector's capabilities, in a real Chromium
 * against server-everything over stdio and the model simulator: resources and templates browsed,
 * previews (text inline, binary as size + MIME), a resource attached as a chip (removable) and sent
 * with a message (the model gets its contents, the history names it, the transcript shows it); a
 * prompt picked, a missing required argument refused with the server's message, then filled and
 * sent as the user's turn; the inspector listing what agentd and the server declared, and the
 * server's question waiting for the user until it is answered.
 */
import { describe, expect, it } from 'vitest';
import { findChromium, useBrowserBench, watchFailures } from '../support/browser.ts';
import { everythingStdio, requestsWith, roomyLimits, textOf } from '../support/messaging.ts';
import { PATIENT } from '../support/wait.ts';

const chromiumPath = findChromium();

interface HistoryEvent {
  event: string;
  data: {
    content?: string;
    resources?: { serverId: string; uri: string }[];
    prompt?: { serverId: string; name: string };
  };
}

describe.skipIf(!chromiumPath)('console: MCP resources and prompts; inspector: capabilities', () => {
  const t = useBrowserBench(chromiumPath!, {
    server: { inspect: true, ...roomyLimits },
    mcpServers: { everything: { ...everythingStdio, logLevel: 'warning', roots: ['file:///tmp/console-mcp'] } },
  });

  const history = async (sessionId: string): Promise<HistoryEvent[]> => {
    const res = await fetch(`${t.svc.url}/api/sessions/${sessionId}/history`);
    return ((await res.json()) as { events: HistoryEvent[] }).events;
  };

  it('browses resources and templates, previews text and binary, attaches one and sends it', async () => {
    const { page } = t.browser;
    const failures = watchFailures(page);
    await page.goto(`${t.svc.url}/#session=res`);
    const server = page.locator('#server-everything');
    await server.locator('.status', { hasText: 'connected' }).waitFor();
    await server.getByText('Resources', { exact: true }).click();
    const listed = server.locator('.resource:not(.template)').first();
    await listed.waitFor();
    const uri = (await listed.getAttribute('data-uri'))!;
    expect(uri).toMatch(/^demo:\/\//);
    expect(await server.locator('.resource.template').count()).toBeGreaterThan(0);

    await listed.getByRole('button', { name: 'Preview' }).click();
    await expect
      .poll(async () => (await listed.locator('.resource-preview pre.text').textContent())?.length ?? 0, PATIENT)
      .toBeGreaterThan(0);

    const blob = server.locator('.resource.template[data-uri^="demo://resource/dynamic/blob/"]').first();
    await blob.getByRole('textbox').fill('demo://resource/dynamic/blob/8');
    await blob.getByRole('button', { name: 'Preview' }).click();
    await blob.locator('.resource-preview .binary', { hasText: /bytes/ }).waitFor();

    // Two chips; one removed by keyboard; the other goes with the message.
    await blob.getByRole('button', { name: 'Attach' }).click();
    await listed.getByRole('button', { name: 'Attach' }).click();
    const chips = page.locator('#attachments .chip');
    await expect.poll(() => chips.count(), PATIENT).toBe(2);
    await page.getByRole('button', { name: 'Remove demo://resource/dynamic/blob/8' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => chips.count(), PATIENT).toBe(1);
    expect(await chips.first().getAttribute('data-uri')).toBe(uri);
    await t.browser.screenshot('console-mcp-resources');

    await page.getByLabel('Message').fill('Summarize ATTACHED-1');
    await page.getByLabel('Message').press('Enter');
    await page
      .locator('.user', { hasText: 'Summarize ATTACHED-1' })
      .locator('.attached', { hasText: `resource ${uri} (everything)` })
      .waitFor();
    expect(await page.locator('#attachments').isHidden()).toBe(true); // the chips went with the message
    await page.locator('.assistant[data-done="true"]').last().waitFor();
    const seen = requestsWith(t.sim, 'Summarize ATTACHED-1');
    expect(seen.length).toBeGreaterThan(0);
    expect(textOf(seen[0]!.body.messages.filter((m) => m.role === 'user').at(-1))).toContain(`[resource ${uri}`);
    const user = (await history('res')).find((e) => e.event === 'userMessage');
    expect(user?.data).toMatchObject({ content: 'Summarize ATTACHED-1', resources: [{ serverId: 'everything', uri }] });
    expect(failures.list()).toEqual([]);
    failures.stop();
  });

  it("picks a prompt: a missing required argument shows the server's message; filled, it is sent as the turn", async () => {
    const { page } = t.browser;
    await page.getByLabel('New session').fill('prompted');
    await page.getByRole('button', { name: 'Open' }).click();
    await page.locator('#session-name', { hasText: 'prompted' }).waitFor();
    const server = page.locator('#server-everything');
    await server.locator('.status', { hasText: 'connected' }).waitFor();
    await server.getByText('Prompts', { exact: true }).click();
    await server.locator('.prompt summary', { hasText: 'args-prompt' }).click();
    const form = server.locator('.prompt', { hasText: 'args-prompt' }).locator('form');
    const city = form.getByLabel(/^city \*/);
    expect(await city.getAttribute('aria-required')).toBe('true');
    await form.getByRole('button', { name: 'Send args-prompt' }).click();
    await form.locator('.prompt-output', { hasText: /MISSING_FIELD: .*city/ }).waitFor();
    expect((await history('prompted')).filter((e) => e.event === 'userMessage')).toEqual([]);

    await city.fill('Lyon');
    await form.getByLabel('Extra text (optional)').fill('PROMPTED-1 in Celsius');
    await form.getByRole('button', { name: 'Send args-prompt' }).click();
    await page
      .locator('.user', { hasText: 'PROMPTED-1 in Celsius' })
      .locator('.attached', { hasText: 'prompt args-prompt (everything)' })
      .waitFor();
    await t.browser.screenshot('console-mcp-prompt');
    await expect
      .poll(
        () => t.sim.requests.some((q) => q.body.messages.some((m) => textOf(m).includes("What's weather in Lyon?"))),
        PATIENT,
      )
      .toBe(true);
    await expect
      .poll(async () => (await history('prompted')).filter((e) => e.event === 'userMessage').length, PATIENT)
      .toBe(1);
    const user = (await history('prompted')).find((e) => e.event === 'userMessage');
    expect(user?.data).toMatchObject({
      content: 'PROMPTED-1 in Celsius',
      prompt: { serverId: 'everything', name: 'args-prompt' },
    });
  });

  it('the inspector shows what agentd and the server declared', async () => {
    const { page } = t.browser;
    await page.goto(`${t.svc.url}/inspect`);
    const server = page.locator('#tool-servers [data-server="everything"]');
    await server.waitFor();
    const declared = server.locator('.caps.client');
    await declared.locator('[data-capability="roots"]', { hasText: 'roots (listChanged)' }).waitFor();
    expect(await declared.textContent()).toContain('logging level: warning');
    expect(await declared.textContent()).toContain('progress: a token with every call');
    const offered = server.locator('.caps.server');
    for (const cap of ['tools', 'resources', 'prompts', 'logging'])
      await offered.locator(`[data-capability="${cap}"]`).waitFor();
    expect(await offered.locator('[data-capability="resources"]').textContent()).toMatch(/subscribe/);
    await t.browser.screenshot('inspector-capabilities');
  });

  it("the inspector lists a server's question waiting for the user under that server, until it is answered", async () => {
    const { page } = t.browser;
    const post = (path: string, body: unknown) =>
      fetch(`${t.svc.url}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    await page.goto(`${t.svc.url}/inspect`);
    await expect.poll(() => page.locator('#status').textContent(), PATIENT).toBe('live');
    expect(
      (await post('/api/message', { sessionId: 'asking', message: 'Ask me [[tool:trigger-elicitation-request {}]]' }))
        .status,
    ).toBe(200);
    const waiting = page.locator('#tool-servers [data-server="everything"] .waiting li');
    await waiting.first().waitFor({ timeout: PATIENT.timeout });
    const { elicitations } = (await (await fetch(`${t.svc.url}/api/sessions/asking/elicitations`)).json()) as {
      elicitations: { id: string; callId: string }[];
    };
    expect(elicitations).toHaveLength(1);
    expect(await waiting.getAttribute('data-waiting')).toBe(elicitations[0]!.id);
    // The question's text is conversation content: hidden unless the inspector shows content.
    expect(await waiting.textContent()).toMatch(
      new RegExp(`^question “\\[content\\]” · session asking, call ${elicitations[0]!.callId} · expires `),
    );
    await t.browser.screenshot('inspector-waiting-question');
    expect((await post(`/api/sessions/asking/elicitations/${elicitations[0]!.id}`, { action: 'decline' })).status).toBe(
      200,
    );
    await expect.poll(() => waiting.count(), PATIENT).toBe(0);
  });
});
