import { describe, expect, it } from 'vitest';
import { backoffDelay, type BackoffPolicy } from '../../src/backoff.ts';

describe('backoffDelay (model retries and MCP reconnects share it)', () => {
  const policy: BackoffPolicy = { baseMs: 100, maxMs: 1000, jitterDown: 0.5, jitterUp: 0.25 };

  it('doubles from the base and stops at the maximum', () => {
    const mid = () => 2 / 3; // factor 1 − 0.5 + 0.75·(2/3) = 1
    expect([0, 1, 2, 3, 4, 5].map((n) => backoffDelay(n, policy, mid))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(backoffDelay(10_000, policy, mid)).toBe(1000);
  });

  it('scales by a jitter factor in [1 − jitterDown, 1 + jitterUp], never past the maximum', () => {
    expect(backoffDelay(1, policy, () => 0)).toBe(100);
    expect(backoffDelay(1, policy, () => 0.999999)).toBe(250);
    expect(backoffDelay(4, policy, () => 0.999999)).toBe(1000);
  });
});
