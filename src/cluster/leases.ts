import type { Logger } from '../log/index.ts';
import type { RedisConnection } from '../redis/index.ts';

/**
 * Takes the lease for this instance when nobody holds it, renews it when this instance does; answers
 * the holder. KEYS: lease. ARGV: instanceId, leaseMs.
 */
const CLAIM = `
local owner = redis.call('GET', KEYS[1])
if not owner then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return ARGV[1]
end
if owner == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return owner`;

/** Gives the lease up if this instance holds it. KEYS: lease. ARGV: instanceId. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

export interface LeaseOptions {
  client: RedisConnection;
  keyPrefix: string;
  instanceId: string;
  /** How long a lease outlives its holder's last renewal. */
  leaseMs: number;
  log: Logger;
  /** Called when a lease this instance held turned out to be someone else's (it could not renew in time). */
  onLost: (sessionId: string) => void;
}

/**
 * Session ownership: at most one instance runs a session's turns, the one holding its lease in Redis
 * (`<prefix>{s:<sessionId>}:owner`, set if absent with an expiry).
 *
 * Contracts:
 * - `claim` answers the holder's instance id, taking the lease when it is free; a claim of a lease
 *   this instance holds renews it. Leases held are renewed every `leaseMs / 3` until released, so a
 *   holder that dies loses them within `leaseMs`.
 * - A renewal that finds another holder drops the lease here and calls `onLost`; one that cannot
 *   reach Redis keeps the lease and tries again (nobody else can take it while Redis is away).
 * - Rejects with the Redis error when Redis cannot be reached.
 */
export function createLeases(options: LeaseOptions) {
  const { client, keyPrefix, instanceId, leaseMs, log } = options;
  const held = new Set<string>();
  const key = (sessionId: string) => `${keyPrefix}{s:${sessionId}}:owner`;

  async function claim(sessionId: string): Promise<string> {
    const owner = (await client.eval(CLAIM, {
      keys: [key(sessionId)],
      arguments: [instanceId, String(leaseMs)],
    })) as string;
    if (owner === instanceId) held.add(sessionId);
    else if (held.delete(sessionId)) options.onLost(sessionId);
    return owner;
  }

  let failing = false; // one warning per outage, not one per lease and renewal
  const renewer = setInterval(
    () => {
      for (const sessionId of held) {
        claim(sessionId).then(
          () => (failing = false),
          (err: unknown) => {
            if (!failing)
              log.warn(
                { err: err instanceof Error ? err.message : String(err), sessions: held.size },
                'renewing session leases failed; retrying',
              );
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
    /** The instance holding the session's lease, if any (the lease is not taken). */
    holder: async (sessionId: string): Promise<string | null> => client.get(key(sessionId)),
    /** Gives the session's lease up (no-op unless held). */
    async release(sessionId: string): Promise<void> {
      if (held.delete(sessionId)) await giveUp(sessionId);
    },
    /** Stops renewing and gives every lease up (a clean shutdown hands sessions over at once). */
    async close(): Promise<void> {
      clearInterval(renewer);
      const all = [...held];
      held.clear();
      await Promise.all(all.map((s) => giveUp(s).catch(() => undefined)));
    },
  };
}
