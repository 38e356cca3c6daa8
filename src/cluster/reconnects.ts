/**
 * A lease that lapsed while Redis was away says nothing of its holder: a live holder renews it within a third of a
 * lease once its connection is back (leases.ts). So for a lease after this instance's connection came back, it takes
 * no free lease it did not hold: `quietUntil()` says until when (0 before any outage).
 */
import type { Clock } from '../clock.ts';
import { watchOutages, type RedisConnection } from '../redis/index.ts';

export function watchReconnects(client: RedisConnection, leaseMs: number, clock: Clock) {
  let quietUntil = 0;
  // From the moment the connection is ready again (a claim sent then may be answered before Redis said it loaded),
  // and again once it has (a long load must not eat the holders' time to renew).
  const quiet = () => void (quietUntil = clock.now() + leaseMs);
  const close = watchOutages(client, { lost: () => {}, ready: quiet, back: quiet });
  return { quietUntil: () => quietUntil, close };
}
