/**
 * The client in Chromium against a running agentd, as a page would use it (the browser build, with a key): a REST
 * call, and a turn streamed over the browser's own WebSocket (the key as `?token=`), whose text joins to the reply.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { findChromium, openBrowser, type Browser } from '../support/browser.ts';
import { bundleClient } from '../support/client-bundle.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';

const KEY = 'browser-client-key-0123456789';
const chromiumPath = findChromium();

describe.skipIf(!chromiumPath)('the client in Chromium', () => {
  let sim: Simulator;
  let svc: RunningApp;
  let browser: Browser;
  beforeAll(async () => {
    sim = await startSimulator();
    svc = await startApp({ server: { auth: { apiKey: KEY } } }, { modelUrl: sim.url });
    browser = await openBrowser(chromiumPath!);
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
    await sim?.close();
  });

  it('calls a route and streams a turn over the browser WebSocket', async () => {
    const { page } = browser;
    await page.goto(`${svc.url}/api/health/live`);
    await page.addScriptTag({ content: (await bundleClient('iife')).code });
    const seen = await page.evaluate(
      async ({ key, baseUrl }) => {
        const { AgentdClient, joinText } = (globalThis as any).agentd;
        const client = new AgentdClient({ baseUrl, apiKey: key });
        const health = await client.api.health();
        const events: string[] = [];
        let text = '';
        let reply = '';
        for await (const frame of client.chat('browser', 'hi [[reply:hello from Chromium]]')) {
          events.push(frame.event);
          text = joinText(text, frame);
          if (frame.event === 'response') reply = frame.data.content;
        }
        return { status: health.status, events, text, reply, native: typeof WebSocket };
      },
      { key: KEY, baseUrl: svc.url },
    );
    expect(seen).toMatchObject({ status: 'healthy', text: 'hello from Chromium', reply: 'hello from Chromium' });
    expect(seen.events[0]).toBe('userMessage');
    expect(seen.events).toContain('chunk');
    expect(seen.events.at(-1)).toBe('response');
  });
});
