/**
 * A lease that lapsed while Redis was away says nothing of its holder: a live holder renews it within a third of a
 * lease once its connection is back (leases.ts). So for a lease after this instance's connection came back, it takes
 * no free lease it did not hold: `quietUntil()` says until when (0 before any outage).
 */
import type { Clock } from '../clock.ts';
import type { RedisConnection } from '../redis/index.ts';

export function watchReconnects(client: RedisConnection, leaseMs: number, clock: Clock) {
  let lost = false;
  let quietUntil = 0;
  const onError = () => (lost = true);
  const onReady = () => {
    if (lost) quietUntil = clock.now() + leaseMs;
    lost = false;
  };
  client.on('error', onError);
  client.on('ready', onReady);
  return {
    quietUntil: () => quietUntil,
    close() {
      client.off('error', onError);
      client.off('ready', onReady);
    },
  };
}
