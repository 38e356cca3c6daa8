/** How retries wait: exponential from `baseMs`, at most `maxMs`, scaled by a random jitter factor. */
export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
  /** The factor lies in [1 − jitterDown, 1 + jitterUp]. */
  jitterDown: number;
  jitterUp: number;
}

/** Delay in ms before retry number `attempt` (0-based); `random` is uniform in [0, 1). */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number): number {
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(attempt, 30));
  const factor = 1 - policy.jitterDown + (policy.jitterDown + policy.jitterUp) * random();
  return Math.round(Math.min(policy.maxMs, exp * factor));
}
