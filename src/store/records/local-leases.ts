/**
 * Leases held in this process (the memory and JSONL engines: one process holds their medium), by the store's clock.
 * Contract as RecordStore's `claim` (types.ts).
 */
import type { Clock } from '../../clock.ts';
import type { Lease } from './types.ts';

export function createLocalLeases(clock: Clock) {
  const held = new Map<string, { until: number }>();
  /** Leases that ran out unreleased are dropped whenever the map doubled since the last sweep. */
  let sweepAt = 1024;
  const sweep = () => {
    const now = clock.now();
    for (const [key, lease] of held) if (lease.until <= now) held.delete(key);
    sweepAt = Math.max(1024, 2 * held.size);
  };
  return {
    claim(key: string, ttlMs: number): Lease | undefined {
      if (held.size >= sweepAt) sweep();
      const current = held.get(key);
      if (current && current.until > clock.now()) return undefined;
      const mine = { until: clock.now() + ttlMs };
      held.set(key, mine);
      return {
        release: () => {
          if (held.get(key) === mine) held.delete(key);
          return Promise.resolve();
        },
      };
    },
  };
}
