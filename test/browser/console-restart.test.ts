/**
 * The web console in a real Chromium while agentd restarts under it on the same port (the compiled
 * `bin/agentd.js`, stopped with SIGTERM): the page reconnects by itself, with no reload, and its
 * transcript is exactly the service's. With JSONL, and with Redis on the same redis-server, the store is
 * the same (the connection's `hello` names the same store id): the page keeps its transcript and resumes
 * after the last seq it holds. With `storage: memory` the new start is a new, empty store whose seqs start
 * again at 1 (another store id): the page forgets the old transcript instead of merging the new messages
 * into it. Without redis-server the Redis case skips with a notice, unless AGENTD_REQUIRE_REDIS=1.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WebSocket } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { listeningPort, runAgentd, writeAgentFile, type AgentdProcess } from '../support/agentd-process.ts';
import { converse, findChromium, openBrowser, watchFailures, type Browser } from '../support/browser.ts';
import { hasRedisServer, startRedis } from '../support/redis.ts';
import { PATIENT } from '../support/wait.ts';

const chromiumPath = findChromium();
const redisPresent = chromiumPath !== undefined && hasRedisServer();

describe.skipIf(!chromiumPath)('web console across an agentd restart', () => {
  let sim: Simulator;
  let browser: Browser;
  let dir: string;
  const running: AgentdProcess[] = [];
  const start = async (agent: string, port: number) => {
    const p = runAgentd(['--agent', agent, '--web-port', String(port), '--host', '127.0.0.1']);
    running.push(p);
    return { p, port: await listeningPort(p) };
  };
  const stop = async (p: AgentdProcess) => {
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
  };
  const agentWith = (storage: object) =>
    writeAgentFile({
      llm: { provider: 'openai-compatible', baseURL: sim.url, model: 'sim-model', apiKey: 'test-key', maxRetries: 0 },
      storage,
    });

  beforeAll(async () => {
    sim = await startSimulator();
    dir = await mkdtemp(join(tmpdir(), 'agentd-console-restart-'));
    browser = await openBrowser(chromiumPath!);
  });
  afterAll(async () => {
    await browser?.close();
    for (const p of running) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(running.map((p) => p.exited));
    await sim?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** The store ids of the `hello` frames the page receives, in order, until `stop()`. */
  const recordHellos = () => {
    const storeIds: string[] = [];
    const onFrame = ({ payload }: { payload: string | Buffer }) => {
      const frame = JSON.parse(payload.toString()) as { event?: string; data?: { storeId?: string } };
      if (frame.event === 'hello') storeIds.push(frame.data?.storeId ?? '(none)');
    };
    const onSocket = (ws: WebSocket) => ws.on('framereceived', onFrame);
    browser.page.on('websocket', onSocket);
    return { storeIds, stop: () => browser.page.off('websocket', onSocket) };
  };

  /**
   * Opens the console on a fresh agentd, holds a two-turn conversation, restarts agentd on the same
   * port and waits until the page (never reloaded) is connected again; `restarted.stop()` ends it.
   * `hellos`: the store ids of the first start's `hello` and of the one after the restart.
   */
  const conversationAcrossRestart = async (storage: object) => {
    const { page } = browser;
    const agent = await agentWith(storage);
    const first = await start(agent, 0);
    // The page of the case before still retries its stopped agentd: leave it before watching for failures.
    await page.goto('about:blank');
    const hellos = recordHellos();
    const failures = watchFailures(page);
    await page.goto(`http://127.0.0.1:${first.port}/`);
    await expect.poll(() => page.locator('#status').textContent(), PATIENT).toMatch(/^ready/);
    await converse(page, 'Before the restart', 'First answer');
    await converse(page, 'Still before', 'Second answer');
    expect(failures.list()).toEqual([]); // the load and a conversation: no failed request, no console error
    failures.stop();
    const before = await transcript();
    expect(before).toHaveLength(4);
    await page.evaluate('window.notReloaded = true'); // gone if the page reloads

    await stop(first.p);
    await expect.poll(() => page.locator('#status').textContent(), PATIENT).toMatch(/disconnected/);
    expect(await page.getByRole('button', { name: 'Compact history' }).isDisabled()).toBe(true);
    const second = await start(agent, first.port); // the same port
    await expect.poll(() => page.locator('#status').textContent(), { ...PATIENT, timeout: 40_000 }).toMatch(/^ready/);
    expect(await page.getByRole('button', { name: 'Compact history' }).isEnabled()).toBe(true);
    await expect.poll(() => hellos.storeIds.length, PATIENT).toBe(2); // one connection before, one after
    hellos.stop();
    return { before, hellos: hellos.storeIds, stop: () => stop(second.p) };
  };
  const transcript = () => browser.page.locator('#transcript li').allTextContents();
  const users = () => browser.page.locator('#transcript li.user').allTextContents();
  const replies = () => browser.page.locator('#transcript li.assistant').allTextContents();
  const notReloaded = () => browser.page.evaluate('window.notReloaded');

  /** The same store after the restart: the page keeps its transcript and continues it, each message once. */
  const keptAcrossRestart = async (storage: object, screenshot: string) => {
    const { page } = browser;
    const restarted = await conversationAcrossRestart(storage);
    expect(restarted.hellos[1]).toBe(restarted.hellos[0]);
    expect(await transcript()).toEqual(restarted.before);

    await converse(page, 'After the restart', 'Third answer');
    const after = await transcript();
    expect(after.slice(0, 4)).toEqual(restarted.before);
    expect(after).toHaveLength(6);
    expect(await users()).toEqual([
      'Before the restart [[reply:First answer]]',
      'Still before [[reply:Second answer]]',
      'After the restart [[reply:Third answer]]',
    ]);
    expect(await replies()).toEqual(['First answer', 'Second answer', 'Third answer']);
    expect(await notReloaded()).toBe(true);
    // A fresh load replays the same transcript from the log.
    await page.reload();
    await page.locator('.assistant', { hasText: 'Third answer' }).waitFor();
    expect(await transcript()).toEqual(after);
    await browser.screenshot(screenshot);
    await restarted.stop();
  };

  it('JSONL (the same store): keeps the transcript, resumes after its last seq, and continues it, each message once', async () => {
    await keptAcrossRestart({ type: 'jsonl', dir: join(dir, 'sessions') }, 'console-after-restart');
  });

  it.runIf(redisPresent)(
    'Redis (the same store on the same redis-server): the same store id, the transcript kept and continued, each message once',
    async () => {
      const redis = await startRedis();
      try {
        const storage = { type: 'redis', url: redis.url, keyPrefix: `console-restart-${process.pid}:` };
        await keptAcrossRestart(storage, 'console-after-redis-restart');
      } finally {
        await redis.stop();
      }
    },
  );

  it('storage: memory (a new, empty store): forgets the old transcript; the new message shows, its reply after it', async () => {
    const { page } = browser;
    const restarted = await conversationAcrossRestart({ type: 'memory' });
    expect(restarted.hellos[1]).not.toBe(restarted.hellos[0]);
    // The new store holds nothing of the old conversation: neither does the page.
    await expect.poll(transcript, PATIENT).toEqual([]);

    await converse(page, 'After the restart', 'Third answer');
    expect(await transcript()).toHaveLength(2);
    expect(await users()).toEqual(['After the restart [[reply:Third answer]]']);
    expect(await replies()).toEqual(['Third answer']);
    await converse(page, 'And once more', 'Fourth answer');
    expect(await users()).toEqual([
      'After the restart [[reply:Third answer]]',
      'And once more [[reply:Fourth answer]]',
    ]);
    expect(await replies()).toEqual(['Third answer', 'Fourth answer']);
    expect(await notReloaded()).toBe(true);
    const after = await transcript();
    await page.reload();
    await page.locator('.assistant', { hasText: 'Fourth answer' }).waitFor();
    expect(await transcript()).toEqual(after);
    await browser.screenshot('console-after-memory-restart');
    await restarted.stop();
  });
});
