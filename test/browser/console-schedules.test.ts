/**
 * The console's schedules panel in a real Chromium (issue 61): a principal with the `schedule` scope sees its
 * schedule (from the agent file, every second) with its next tick and its last runs, pauses and resumes it, and opens
 * the session a run ran in from its link; a principal with only `chat` is refused the list and sees no panel.
 */
import { describe, expect, it } from 'vitest';
import { findChromium, useBrowserBench, watchFailures } from '../support/browser.ts';
import { PATIENT } from '../support/wait.ts';

const OPS = 'ops-console-key-0123456789';
const CAROL = 'carol-console-key-012345678';
const chromiumPath = findChromium();

describe.skipIf(!chromiumPath)('console schedules panel in Chromium', () => {
  const t = useBrowserBench(chromiumPath!, {
    server: {
      auth: {
        keys: [
          { name: 'ops', key: OPS, scopes: ['chat', 'schedule'] },
          { name: 'carol', key: CAROL, scopes: ['chat'] },
        ],
      },
      limits: { rest: { points: 1000 } },
    },
    schedules: [
      {
        id: 'heartbeat',
        everyMs: 1000,
        message: 'tick {{firedAt}} [[reply:beat]]',
        session: 'heartbeat-runs',
        principal: 'ops',
      },
    ],
  });
  const paused = async () =>
    (
      (await (
        await fetch(`${t.svc.url}/api/schedules/heartbeat`, { headers: { authorization: `Bearer ${OPS}` } })
      ).json()) as { schedule: { paused: boolean } }
    ).schedule.paused;

  it('lists the schedule with its runs, pauses and resumes it, and opens a run’s session from its link', async () => {
    const { page } = t.browser;
    await page.goto(`${t.svc.url}/`);
    await page.getByLabel('API key').fill(OPS);
    await page.getByRole('button', { name: 'Use key' }).click();
    const failures = watchFailures(page);
    const item = page.locator('#schedules li[data-schedule="heartbeat"]');
    await item.waitFor({ timeout: PATIENT.timeout });
    await expect.poll(() => item.textContent(), PATIENT).toMatch(/next \d/);
    // The panel reads its runs again by itself: finished ones appear, each linked to its session.
    const finished = item.locator('.run-finished a', { hasText: 'heartbeat-runs' }).first();
    await finished.waitFor({ timeout: PATIENT.timeout });
    await t.browser.screenshot('console-schedules');

    await item.getByRole('button', { name: 'Pause heartbeat' }).click();
    await item.getByRole('button', { name: 'Resume heartbeat' }).waitFor({ timeout: PATIENT.timeout });
    expect(await item.locator('.paused').textContent()).toBe('paused');
    expect(await paused()).toBe(true);
    await item.getByRole('button', { name: 'Resume heartbeat' }).click();
    await item.getByRole('button', { name: 'Pause heartbeat' }).waitFor({ timeout: PATIENT.timeout });
    expect(await paused()).toBe(false);

    await item.locator('.run-finished a', { hasText: 'heartbeat-runs' }).first().click();
    await expect.poll(() => page.locator('#session-name').textContent(), PATIENT).toBe('heartbeat-runs');
    await page
      .locator('.assistant[data-done="true"]', { hasText: 'beat' })
      .first()
      .waitFor({ timeout: PATIENT.timeout });
    expect(await page.locator('.user', { hasText: 'tick ' }).count()).toBeGreaterThan(0);
    failures.stop();
    expect(failures.list()).toEqual([]);
  });

  it('shows no panel to a principal whose scope does not allow schedules', async () => {
    const page = await t.browser.page.context().newPage(); // a tab of its own: its own key
    try {
      const refused = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/schedules');
      await page.goto(`${t.svc.url}/`);
      await page.getByLabel('API key').fill(CAROL);
      await page.getByRole('button', { name: 'Use key' }).click();
      expect((await refused).status()).toBe(403);
      await page.locator('#status', { hasText: 'tool server' }).waitFor({ timeout: PATIENT.timeout });
      expect(await page.locator('#schedules-panel').isHidden()).toBe(true);
    } finally {
      await page.close();
    }
  });
});
