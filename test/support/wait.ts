import { vi } from 'vitest';

/**
 * How long tests wait for a condition (`vi.waitFor`, `expect.poll`): generous, because a loaded
 * 2-core machine can be slow to start processes and deliver frames, yet a bound, so that a real
 * hang fails with the condition it waited for rather than the test's timeout.
 */
export const PATIENT: { readonly timeout: number; readonly interval: number } = { timeout: 30_000, interval: 50 };

/**
 * Resolves once `check` holds (re-checked every `interval`), or fails naming `what` (a function when
 * the message should show what was seen by then, e.g. a process's output). For a condition read
 * as a yes or no; when the condition is a value to compare, `expect.poll(read, PATIENT)` says more.
 */
export function until(
  check: () => boolean | Promise<boolean>,
  what: string | (() => string),
  options: { timeout?: number; interval?: number } = {},
): Promise<void> {
  return vi.waitFor(
    async () => {
      if (!(await check())) throw new Error(`not in time: ${typeof what === 'string' ? what : what()}`);
    },
    { ...PATIENT, ...options },
  );
}
