import { setTimeout as sleep } from 'node:timers/promises';
import { messageOf } from '../errors/index.ts';
import { watchReconnects } from './reconnects.ts';
import type { ClusterShared } from './shared.ts';

/** Takes a free lease, renews our own; answers the holder, and 1 when it took the lease. KEYS: lease. ARGV: instanceId, leaseMs. */
const CLAIM = `
local owner = redis.call('GET', KEYS[1])
if not owner then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return {ARGV[1], 1}
end
if owner == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return {owner, 0}`;

/** Gives the lease up if this instance holds it. KEYS: lease. ARGV: instanceId. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

export interface LeaseOptions extends Omit<ClusterShared, 'ids'> {
  /** Called when a lease this instance held turned out to be someone else's (it could not renew in time). */
  onLost: (sessionId: string) => void;
  /** Called when this instance took a free lease (a lease of its own that had lapsed counts). */
  onTaken?: (sessionId: string) => void;
}

/**
 * Session ownership: one instance, the holder of its lease in Redis, runs a session's turns. `claim` answers the
 * holder, taking a free lease (rejects when Redis is unreachable). Held leases renew every `leaseMs / 3`, so a dead
 * holder loses them within `leaseMs`; a renewal finding another holder calls `onLost`, one failing keeps retrying.
 * `owner` is `claim` without the round trip while this instance's lease is fresh (its last confirming claim was sent
 * less than half a lease ago, so it cannot have expired, and nobody takes a lease before it expires) and Redis is
 * connected (else it rejects as `claim` does, so a caller hears of the outage at once).
 * For a lease after Redis came back (reconnects.ts), `claim` takes no free lease this instance did not hold: it waits
 * until the lease has a holder again (a live one renews it) or the lease has passed, so a command that reaches this
 * instance first does not take a live owner's session (and resume a turn its caller was told had failed).
 */
export function createLeases(options: LeaseOptions) {
  const { client, keyPrefix, instanceId, leaseMs, clock, log } = options;
  /** Held leases, with when the last claim that confirmed each was sent. */
  const held = new Map<string, number>();
  const key = (sessionId: string) => `${keyPrefix}{s:${sessionId}}:owner`;

  const reconnects = watchReconnects(client, leaseMs, clock);
  /** Resolves once the session's lease has a holder or the quiet after a reconnect is over. */
  async function quietFor(sessionId: string): Promise<void> {
    for (let left = reconnects.quietUntil() - clock.now(); left > 0; left = reconnects.quietUntil() - clock.now()) {
      if ((await client.get(key(sessionId))) !== null) return;
      await sleep(Math.min(left, Math.max(50, leaseMs / 6))); // a holder renews every third of a lease
    }
  }

  async function claim(sessionId: string): Promise<string> {
    if (!held.has(sessionId)) await quietFor(sessionId);
    const sent = clock.now();
    const [owner, taken] = (await client.eval(CLAIM, {
      keys: [key(sessionId)],
      arguments: [instanceId, String(leaseMs)],
    })) as [string, number];
    if (owner === instanceId) {
      held.set(sessionId, sent);
      if (taken === 1) options.onTaken?.(sessionId);
    } else if (held.delete(sessionId)) options.onLost(sessionId);
    return owner;
  }

  let failing = false; // one warning per outage, not one per lease and renewal
  const renewer = setInterval(
    () => {
      for (const sessionId of held.keys()) {
        claim(sessionId).then(
          () => (failing = false),
          (err: unknown) => {
            if (!failing)
              log.warn({ err: messageOf(err), sessions: held.size }, 'renewing session leases failed; retrying');
            failing = true;
          },
        );
      }
    },
    Math.max(100, Math.floor(leaseMs / 3)),
  );
  renewer.unref();

  const giveUp = (sessionId: string) => client.eval(RELEASE, { keys: [key(sessionId)], arguments: [instanceId] });

  return {
    claim,
    /** Until when, after Redis came back, no free lease this instance did not hold is taken (reconnects.ts). */
    quietUntil: reconnects.quietUntil,
    owner: (sessionId: string): Promise<string> => {
      const sent = held.get(sessionId);
      const fresh = sent !== undefined && clock.now() - sent < leaseMs / 2 && client.isReady;
      return fresh ? Promise.resolve(instanceId) : claim(sessionId);
    },
    /** The instance holding the session's lease, if any (the lease is not taken). */
    holder: async (sessionId: string): Promise<string | null> => client.get(key(sessionId)),
    /** Gives the session's lease up (no-op unless held). */
    async release(sessionId: string): Promise<void> {
      if (held.delete(sessionId)) await giveUp(sessionId);
    },
    /** Stops renewing and gives every lease up (a clean shutdown hands sessions over at once). */
    async close(): Promise<void> {
      clearInterval(renewer);
      reconnects.close();
      const all = [...held.keys()];
      held.clear();
      await Promise.all(all.map((s) => giveUp(s).catch(() => undefined)));
    },
  };
}
