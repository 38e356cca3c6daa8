/** The built-in inspector page in Chromium: live actors, a tool turn through its states, the MCP actor's state. */
import { describe, expect, it } from 'vitest';
import { findChromium, useBrowserBench, watchFailures } from '../support/browser.ts';
import { fixturePath } from '../support/paths.ts';
import { PATIENT } from '../support/wait.ts';

const chromiumPath = findChromium();

describe.skipIf(!chromiumPath)('inspector page in Chromium', () => {
  const t = useBrowserBench(chromiumPath!, {
    server: { inspect: true },
    mcpServers: { echo: { type: 'stdio', command: process.execPath, args: [fixturePath('echo-server')] } },
    toolPolicy: { rules: [{ server: 'echo', tool: 'big', action: 'ask' }] },
  });
  const post = (path: string, body: unknown) =>
    fetch(`${t.svc.url}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('shows the MCP actor connected, with its active state highlighted in the chart', async () => {
    const { page } = t.browser;
    const failures = watchFailures(page);
    await page.goto(`${t.svc.url}/inspect`);
    const echo = page.locator('button[data-actor="mcp:echo"]');
    await echo.locator('.value', { hasText: 'connected' }).waitFor();
    expect(failures.list()).toEqual([]); // no failed request or console error on load
    failures.stop();
    await echo.click();
    await page.locator('#chart svg .state.active[data-state="connected"]').waitFor(); // the laid-out chart (machines/layouts.json)
    expect(await page.locator('#chart .state.active').count()).toBe(1);
  });

  it('follows a tool turn through its states as it runs', async () => {
    const { page } = t.browser;
    const reply = fetch(`${t.svc.url}/api/message-sync`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ message: 'Echo this [[tool:echo {"message":"inspected"}]]' }),
    });
    expect((await reply).status).toBe(200);
    const turn = page.locator('button[data-actor="turn"]').last();
    await turn.waitFor();
    await turn.click();
    await expect
      .poll(() => page.locator('#path').textContent(), PATIENT)
      .toBe('states: thinking → callingTools → thinking → responding');
    await page.locator('#chart svg .state.active[data-state="responding"]').waitFor();
    expect(await page.locator('#chart svg .edge').count()).toBeGreaterThan(3);
    expect(await page.locator('#events li').count()).toBeGreaterThan(5);
    expect(await page.locator('body').textContent()).not.toContain('inspected'); // sanitized: no tool text
    await t.browser.screenshot('inspector');
  });

  it("opens on a session when no turn runs; a tool server's context leaves out the functions its machine is given", async () => {
    const { page } = t.browser;
    await page.goto(`${t.svc.url}/inspect`);
    await page.locator('button[aria-current="true"][data-actor="turn:default"]').waitFor(); // the session of the turn before
    expect(await page.locator('#actor-title').textContent()).toBe('turn:default');
    await page.locator('button[data-actor="mcp:echo"]').click();
    await expect.poll(() => page.locator('#context').textContent(), PATIENT).toContain('"serverId": "echo"');
    const context = JSON.parse((await page.locator('#context').textContent()) ?? '{}') as Record<string, unknown>;
    expect(Object.keys(context)).not.toEqual(expect.arrayContaining(['now']));
    expect(Object.keys(context)).not.toEqual(expect.arrayContaining(['random']));
    expect(await page.locator('#context-hidden').textContent()).toBe(
      'Not shown (functions the machine is given): now, random',
    );
  });

  it('opens on the busy turn, waiting in awaitingUser, rather than on a tool server', async () => {
    const { page } = t.browser;
    expect((await post('/api/message', { sessionId: 'opened', message: 'Wait [[tool:big {"bytes":3}]]' })).status).toBe(
      200,
    );
    const pending = () =>
      fetch(`${t.svc.url}/api/sessions/opened/approvals`)
        .then((r) => r.json() as Promise<{ approvals: { callId: string }[] }>)
        .then((b) => b.approvals);
    await expect.poll(async () => (await pending()).length, PATIENT).toBe(1);
    await page.goto(`${t.svc.url}/inspect`);
    await page.locator('button[aria-current="true"][data-actor="turn"]').waitFor();
    expect(await page.locator('#actor-title').textContent()).toBe('turn');
    await page.locator('#chart svg .state.active[data-state="awaitingUser"]').waitFor();
    expect(await page.locator('#context').textContent()).toContain('"iteration"');
    const [call] = await pending();
    expect((await post(`/api/sessions/opened/approvals/${call!.callId}`, { decision: 'approve' })).status).toBe(200);
    await expect.poll(() => page.locator('#path').textContent(), PATIENT).toMatch(/responding$/);
  });

  it('shows a turn waiting in awaitingUser until the call is approved', async () => {
    const { page } = t.browser;
    await page.goto(`${t.svc.url}/inspect`);
    await expect.poll(() => page.locator('#status').textContent(), PATIENT).toBe('live'); // watching before the turn starts
    await post('/api/message', { sessionId: 'ask', message: 'Needs a yes [[tool:big {"bytes":5}]]' });
    const turn = page.locator('button[data-actor="turn"]', { hasText: 'awaitingUser' }).last();
    await turn.waitFor({ timeout: PATIENT.timeout });
    await turn.click();
    await page.locator('#chart svg .state.active[data-state="awaitingUser"]').waitFor();
    const { approvals } = (await (await fetch(`${t.svc.url}/api/sessions/ask/approvals`)).json()) as {
      approvals: { callId: string }[];
    };
    expect((await post(`/api/sessions/ask/approvals/${approvals[0]!.callId}`, { decision: 'approve' })).status).toBe(
      200,
    );
    await expect
      .poll(() => page.locator('#path').textContent(), PATIENT)
      .toBe('states: thinking → awaitingUser → callingTools → thinking → responding');
    await t.browser.screenshot('inspector-approval');
  });

  it("bridges the stream to Stately's inspector in an iframe (stubbed: nothing leaves the machine)", async () => {
    const { page } = t.browser;
    // The hosted inspector, stubbed in the browser: it says it is connected, then keeps what it is sent.
    await page.route('https://stately.ai/**', (route) =>
      route.fulfill({
        contentType: 'text/html',
        body: '<script>window.got=[];addEventListener("message",e=>got.push(e.data));parent.postMessage({type:"@statelyai.connected"},"*")</script>',
      }),
    );
    await page.goto(`${t.svc.url}/inspect/stately`);
    const frame = () => page.frames().find((f) => f.url().startsWith('https://stately.ai'));
    await expect.poll(async () => (await frame()?.evaluate<number>('got.length')) ?? 0, PATIENT).toBeGreaterThan(3);
    const got = await frame()!.evaluate<{ type: string; name?: string; _version?: string }[]>('got');
    expect(got.filter((f) => f.type === '@xstate.actor').map((f) => f.name)).toEqual(
      expect.arrayContaining(['mcp:echo', 'turn:default']),
    );
    expect(got.every((f) => typeof f._version === 'string')).toBe(true);
    await page.unroute('https://stately.ai/**');
  });

  it('is linked from the console', async () => {
    const { page } = t.browser;
    const failures = watchFailures(page);
    await page.goto(`${t.svc.url}/`);
    await page.getByRole('link', { name: 'Inspector' }).waitFor();
    await expect.poll(() => page.locator('#status').textContent(), PATIENT).toMatch(/^ready/);
    expect(failures.list()).toEqual([]);
    failures.stop();
  });
});
