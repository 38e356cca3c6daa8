/**
 * A real browser for the page tests: Debian's Chromium (or AGENTD_CHROMIUM) driven by playwright-core,
 * headless, a fresh context per file in one browser per worker process (`openBrowser`). Without Chromium the tests
 * skip with a notice, unless AGENTD_REQUIRE_BROWSER=1 (CI), where a missing browser is a failure.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  chromium,
  type Browser as PlaywrightBrowser,
  type ConsoleMessage,
  type Page,
  type Request,
  type Response,
} from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { ROOT } from './paths.ts';
import { startApp, type RunningApp } from './start-app.ts';
import { requiredOrSkipped } from './system-program.ts';
import { PATIENT } from './wait.ts';

const CANDIDATES = [process.env.AGENTD_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(
  (p): p is string => !!p,
);

/** The Chromium to use, or undefined (after a visible notice) when there is none and none is required. */
export function findChromium(): string | undefined {
  const found = CANDIDATES.find((p) => existsSync(p));
  const message = `Chromium not found (looked at ${CANDIDATES.join(', ')}); install it with: apt-get install -y chromium`;
  return requiredOrSkipped(found !== undefined, 'browser', message, 'AGENTD_REQUIRE_BROWSER') ? found : undefined;
}

export const SCREENSHOTS = join(ROOT, 'test', 'browser', 'screenshots');

export interface Browser {
  page: Page;
  /** Saves a full-page screenshot as test/browser/screenshots/<name>.png (gitignored). */
  screenshot(name: string): Promise<void>;
  close(): Promise<void>;
}

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * One Chromium per worker process, shared by the page files the worker runs one after another (the int project
 * does not isolate files, so this module's state outlives a file): a launch costs about a second of CPU, a context
 * a few milliseconds. playwright ends the browser when the worker exits; a browser that crashed is launched again.
 */
let shared: Promise<PlaywrightBrowser> | undefined;
function sharedChromium(executablePath: string): Promise<PlaywrightBrowser> {
  shared ??= chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS }).then((browser) => {
    browser.on('disconnected', () => (shared = undefined));
    return browser;
  });
  return shared;
}

/** A fresh browser context (its own cookies, storage and cache, as a new profile has) with one page. */
export async function openBrowser(executablePath: string): Promise<Browser> {
  const browser = await sharedChromium(executablePath);
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  return {
    page,
    async screenshot(name) {
      await mkdir(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
    },
    close: () => context.close(),
  };
}

/**
 * Records what a user would see go wrong in the browser's tools while a page loads and runs: failed
 * requests, answers with status 400 or more, and console errors. `stop` ends the recording.
 */
export function watchFailures(page: Page): { list(): string[]; stop(): void } {
  const found: string[] = [];
  const failed = (r: Request) =>
    found.push(`request failed: ${r.method()} ${r.url()} (${r.failure()?.errorText ?? ''})`);
  const answered = (r: Response) => {
    if (r.status() >= 400) found.push(`${r.status()}: ${r.request().method()} ${r.url()}`);
  };
  const logged = (m: ConsoleMessage) => {
    if (m.type() === 'error') found.push(`console error: ${m.text()}`);
  };
  page.on('requestfailed', failed);
  page.on('response', answered);
  page.on('console', logged);
  return {
    list: () => [...found],
    stop() {
      page.off('requestfailed', failed);
      page.off('response', answered);
      page.off('console', logged);
    },
  };
}

/** A message typed into the console and its reply (the simulator's `[[reply:…]]`), waited for. */
export async function converse(page: Page, message: string, reply: string): Promise<void> {
  await page.getByLabel('Message').fill(`${message} [[reply:${reply}]]`);
  await page.getByLabel('Message').press('Enter');
  await page.locator('.assistant[data-done="true"]', { hasText: reply }).waitFor({ timeout: PATIENT.timeout });
}

/**
 * Registers beforeAll/afterAll for a page test (call it inside the `describe.skipIf(!chromiumPath)`):
 * the simulator, agentd with `config` and the simulator as its model, and Chromium at `executablePath`;
 * stopped in reverse order.
 */
/** `config`: agentd's config, or a function that makes it once the earlier `beforeAll` hooks ran (e.g. a tool server's port). */
export function useBrowserBench(
  executablePath: string,
  config: Record<string, unknown> | (() => Record<string, unknown>),
) {
  let sim: Simulator | undefined;
  let svc: RunningApp | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    sim = await startSimulator();
    svc = await startApp(typeof config === 'function' ? config() : config, { modelUrl: sim.url });
    browser = await openBrowser(executablePath);
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
    await sim?.close();
  });
  return {
    get sim() {
      return sim ?? expect.unreachable('simulator not started');
    },
    get svc() {
      return svc ?? expect.unreachable('agentd not started');
    },
    get browser() {
      return browser ?? expect.unreachable('browser not opened');
    },
  };
}
