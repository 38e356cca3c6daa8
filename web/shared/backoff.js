// @ts-check
// The pages' reconnect delays (live.js), apart from the DOM so tests can check them.

/** 0.5 s doubling to 15 s. */
export const BACKOFF = { first: 500, max: 15_000 };

/**
 * The delay before reconnect attempt `attempt` (0 for the first): drawn from the upper half of its
 * step (jitter), so many tabs do not all come back at once after agentd restarts.
 * @param {number} attempt
 * @param {() => number} [random]
 */
export const backoffDelay = (attempt, random = Math.random) => {
  const cap = Math.min(BACKOFF.max, BACKOFF.first * 2 ** attempt);
  return cap / 2 + random() * (cap / 2);
};
