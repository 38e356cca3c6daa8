/**
 * How long tests wait for a condition (`vi.waitFor`, `expect.poll`): generous, because a loaded
 * 2-core machine can be slow to start processes and deliver frames, yet a bound, so that a real
 * hang fails with the condition it waited for rather than the test's timeout.
 */
export const PATIENT: { readonly timeout: number; readonly interval: number } = { timeout: 20_000, interval: 50 };
