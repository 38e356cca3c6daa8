/**
 * The console's memory panel (issue 62) in a real Chromium: the caller's memory listed (an item saved over REST and
 * one the model saved with `memory_save`), an item deleted, the working-memory profile edited (the next turn's
 * system prompt carries it), and the export downloaded as JSON.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { findChromium, useBrowserBench, watchFailures } from '../support/browser.ts';
import { requestsWith, roomyLimits, textOf } from '../support/messaging.ts';
import { PATIENT } from '../support/wait.ts';

const chromiumPath = findChromium();

describe.skipIf(!chromiumPath)('console: the memory panel', () => {
  const t = useBrowserBench(chromiumPath!, { server: roomyLimits, memory: {} });
  const memory = async () => {
    const res = await fetch(`${t.svc.url}/api/memory`);
    return (await res.json()) as { profile: string; items: { id: string; text: string }[] };
  };

  it('lists the memory, deletes an item, edits the profile and exports it', async () => {
    const { page } = t.browser;
    const failures = watchFailures(page);
    const saved = await fetch(`${t.svc.url}/api/memory`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ text: 'Likes green tea', tags: ['drinks'] }),
    });
    expect(saved.status).toBe(201);
    await page.goto(`${t.svc.url}/#session=mem`);
    // Sent before its socket is open, a message stays in the box ("not connected"): wait for the link (Compact enables).
    await page.locator('#compact:enabled').waitFor();
    await page.getByLabel('Message').fill('my dog is Rex [[tool:memory_save {"text":"Has a dog named Rex"}]]');
    await page.getByLabel('Message').press('Enter');
    await page.locator('.assistant[data-done="true"]', { hasText: 'Saved as' }).waitFor({ timeout: PATIENT.timeout });

    await page.getByText('Memory', { exact: true }).click();
    const items = page.locator('#memory-items li');
    await expect
      .poll(() => items.allTextContents(), PATIENT)
      .toEqual([expect.stringContaining('Has a dog named Rex'), expect.stringContaining('Likes green tea [drinks]')]);
    await t.browser.screenshot('console-memory');

    await page.getByRole('button', { name: 'Delete "Likes green tea"' }).click();
    await expect.poll(() => items.count(), PATIENT).toBe(1);
    expect((await memory()).items.map((i) => i.text)).toEqual(['Has a dog named Rex']);

    await page.getByLabel('Working memory (in every new turn)').fill('Prefers short answers.');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.locator('#memory .memory-status', { hasText: 'Profile saved.' }).waitFor();
    expect((await memory()).profile).toBe('Prefers short answers.');
    await page.getByLabel('Message').fill('PROFILE-CHECK hello');
    await page.getByLabel('Message').press('Enter');
    await page.locator('.assistant[data-done="true"]', { hasText: 'PROFILE-CHECK' }).waitFor();
    expect(textOf(requestsWith(t.sim, 'PROFILE-CHECK')[0]?.body.messages[0])).toContain('Prefers short answers.');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export (JSON)' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('agentd-memory.json');
    const exported = JSON.parse(await readFile(await download.path(), 'utf8')) as {
      profile: string;
      items: { text: string }[];
    };
    expect(exported.profile).toBe('Prefers short answers.');
    expect(exported.items.map((i) => i.text)).toEqual(['Has a dog named Rex']);
    expect(failures.list()).toEqual([]);
    failures.stop();
  });
});
