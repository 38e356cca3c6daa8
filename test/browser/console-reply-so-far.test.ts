/**
 * The web console reloaded mid-reply (issue 73): the page subscribes again and gets the reply's text so far
 * (`replySoFar`), so the reply it shows while the turn still streams begins where the reply begins, not at the chunk
 * the reload came back to, and ends equal to the stored response.
 */
import { describe, expect, it } from 'vitest';
import { findChromium, useBrowserBench } from '../support/browser.ts';
import { roomyLimits } from '../support/messaging.ts';
import { PATIENT } from '../support/wait.ts';

const chromiumPath = findChromium();

describe.skipIf(!chromiumPath)('web console reloaded mid-reply', () => {
  const bench = useBrowserBench(chromiumPath!, { server: roomyLimits });

  it('shows the text streamed before the reload, then the rest as it streams', async () => {
    const { page } = bench.browser;
    await page.goto(`${bench.svc.url}/`);
    const words = Array.from({ length: 80 }, (_, i) => `w${i}`).join(' ');
    // The reply pauses 20 s after its 20th word: the reload comes back while it still streams, however long the
    // reload takes on a busy machine (at 20 words a second alone, the whole reply lasted 4 s).
    await page.getByLabel('Message').fill(`Reload me [[reply:${words}]] [[rate:20]] [[stall:20000 after=20]]`);
    await page.getByLabel('Message').press('Enter');
    const streaming = page.locator('.assistant:not([data-done])', { hasText: 'w8 ' });
    await streaming.waitFor({ timeout: PATIENT.timeout });
    await page.reload();
    // Back while the reply streams: it shows from its first word (the reply so far), before it is done.
    const resumed = page.locator('.assistant:not([data-done])', { hasText: 'w12 ' });
    await resumed.waitFor({ timeout: PATIENT.timeout });
    expect(await resumed.textContent()).toMatch(/^\s*w0 w1 w2 /);
    const done = page.locator('.assistant[data-done="true"]');
    await done.waitFor({ timeout: 20_000 + PATIENT.timeout });
    expect((await done.textContent())?.trim()).toBe(words);
  }, 120_000);
});
