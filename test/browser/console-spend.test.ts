/**
 * The console's spend and budget questions in a real Chromium (issue 74 item 3): the spend panel shows what the
 * caller spent today and this month against its limits (and when each resets), and follows its turns; a step past
 * its daily budget shows as a budget question in words (whose budget, which, spent of the limit, the next step's
 * estimate), answered with "Approve and raise to" a new limit: the step runs, and the panel shows the raised limit.
 */
import { describe, expect, it } from 'vitest';
import { converse, findChromium, useBrowserBench, watchFailures } from '../support/browser.ts';
import { PATIENT } from '../support/wait.ts';

const ALICE = 'alice-console-spend-key-0123';
const chromiumPath = findChromium();

describe.skipIf(!chromiumPath)('console spend and budget questions in Chromium', () => {
  const t = useBrowserBench(chromiumPath!, {
    server: {
      auth: { keys: [{ name: 'alice', key: ALICE, scopes: ['chat', 'schedule'] }] }, // schedule: no refused panel read
      limits: { rest: { points: 1000 } },
    },
    llm: { maxOutputTokens: 100, pricing: { 'sim-model': { input: 1, output: 1 } } },
    budgets: { default: { day: 0.01, month: 1 }, answeredBy: 'principal' },
  });

  it('shows spend against the budgets, and answers a budget question with a raise', async () => {
    const { page } = t.browser;
    await page.goto(`${t.svc.url}/`);
    await page.getByLabel('API key').fill(ALICE);
    await page.getByRole('button', { name: 'Use key' }).click();
    const failures = watchFailures(page);
    const today = page.locator('#spend li[data-period="Today"]');
    const month = page.locator('#spend li[data-period="This month"]');
    await expect.poll(() => today.textContent(), PATIENT).toContain('$0.00 of $0.01');
    expect(await month.textContent()).toContain('$0.00 of $1.00');
    expect(await today.locator('time').getAttribute('datetime')).toMatch(/T00:00:00\.000Z$/); // midnight UTC

    await converse(page, 'one [[cost:0.006]]', 'first');
    await expect.poll(() => today.textContent(), PATIENT).toContain('$0.006 of $0.01');
    await converse(page, 'two [[cost:0.006]]', 'second');
    await expect.poll(() => today.textContent(), PATIENT).toMatch(/\$0\.012 of \$0\.01.*none left/);

    // Past the daily budget: the next step is asked about, in words.
    await page.getByLabel('Message').fill('three [[cost:0.001]] [[reply:third]]');
    await page.getByLabel('Message').press('Enter');
    const question = page.locator('#transcript li.budget');
    await question.waitFor({ timeout: PATIENT.timeout });
    expect(await question.locator('.budget-message').textContent()).toMatch(
      /^alice's daily budget is \$0\.01: \$0\.012 spent so far, and the next model step may cost up to \$0\.\d+\. Let it run\?$/,
    );
    expect(await question.textContent()).toContain('It resets');
    const limit = question.getByLabel('New daily limit (USD)');
    expect(Number(await limit.inputValue())).toBeGreaterThan(0.01);
    await t.browser.screenshot('console-budget-question');
    await limit.fill('0.05');
    await question.getByRole('button', { name: 'Approve and raise to' }).click();
    await question
      .locator('.approved', { hasText: 'Approved by alice (websocket), the daily limit raised to $0.05' })
      .waitFor({ timeout: PATIENT.timeout });
    await page.locator('.assistant[data-done="true"]', { hasText: 'third' }).waitFor({ timeout: PATIENT.timeout });
    await expect.poll(() => today.textContent(), PATIENT).toMatch(/\$0\.013 of \$0\.05 \(raised\).*\$0\.037 left/);
    await t.browser.screenshot('console-spend');
    // The raise holds for the day: the next step runs without asking.
    await converse(page, 'four [[cost:0.001]]', 'fourth');
    expect(await page.locator('#transcript li.budget').count()).toBe(1);
    failures.stop();
    expect(failures.list()).toEqual([]);
  });
});
