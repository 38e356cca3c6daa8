import { setTimeout as sleep } from 'node:timers/promises';
import { AppError, messageOf } from '../errors/index.ts';
import { sessionFenceKey } from '../redis/index.ts';
import { watchReconnects } from './reconnects.ts';
import type { ClusterShared } from './shared.ts';

/**
 * Takes a free lease, renews our own; answers the holder, 1 when it took the lease, and the session's fencing token.
 * Taking a lease issues a new token unless the token is still the one the claimer held (ARGV[3]): then nobody took
 * the session since its own lease lapsed, and its writes stay valid. A new token is the last one plus 1, or Redis'
 * clock in microseconds when that is greater: tokens grow even when Redis lost its keys (a restart without
 * persistence). KEYS: lease, fence, store id. ARGV: instanceId, leaseMs, the token held ('' for none), the store
 * identity held ('' for none): when the store-id key holds another (the store lost data, issue 84), nothing is taken
 * or renewed and it answers taken = -1.
 */
const CLAIM = `
if ARGV[4] ~= '' and redis.call('GET', KEYS[3]) ~= ARGV[4] then return {'', -1, '0'} end
local owner = redis.call('GET', KEYS[1])
local token = redis.call('GET', KEYS[2])
if not owner then
  if not token or token ~= ARGV[3] then
    local t = redis.call('TIME')
    token = string.format('%.0f', math.max((tonumber(token) or 0) + 1, t[1] * 1000000 + t[2]))
    redis.call('SET', KEYS[2], token)
  end
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return {ARGV[1], 1, token}
end
if owner == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return {owner, 0, token or '0'}`;

/** Gives the lease up if this instance holds it. KEYS: lease. ARGV: instanceId. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

export interface LeaseOptions extends Omit<ClusterShared, 'ids'> {
  /**
   * Called when a lease this instance held turned out to be someone else's (it could not renew in time), or was
   * someone else's meanwhile (taken back with a newer fencing token): the session in memory is stale.
   */
  onLost: (sessionId: string) => void;
  /** Called when this instance took a free lease (a lease of its own that had lapsed counts); the claim waits for it. */
  onTaken?: (sessionId: string) => void | Promise<void>;
  /**
   * The store identity this instance holds, and where it tells what shows the store went back (src/app/store-loss.ts):
   * the store-id key holding another identity, or a session's fencing token below the one held here. Neither is taken
   * for another instance taking the session.
   */
  store?:
    | {
        storeId(): string | undefined;
        noticed(
          e: { kind: 'fence'; storeId: string; sessionId: string; held: number; found: number } | undefined,
        ): void;
      }
    | undefined;
}

/** A claim refused because the store-id key holds another identity than this instance's. */
const storeChanged = () =>
  new AppError('SERVICE_UNAVAILABLE', 'The store lost data: its identity changed; try again', { reason: 'storage' });

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
 * Fencing (issue 71): each lease comes with the session's fencing token (`fence`), which every write of the session
 * carries; a store refuses a token that is not the latest, so a holder paused past its lease writes nothing once
 * another instance took the session.
 */
export function createLeases(options: LeaseOptions) {
  const { client, keyPrefix, instanceId, leaseMs, clock, log } = options;
  /** Held leases: when the last claim that confirmed each was sent, and the session's fencing token. */
  const held = new Map<string, { sent: number; token: number }>();
  const key = (sessionId: string) => `${keyPrefix}{s:${sessionId}}:owner`;

  const reconnects = watchReconnects(client, leaseMs, clock);
  /** Resolves once the session's lease has a holder or the quiet after a reconnect is over. */
  async function quietFor(sessionId: string): Promise<void> {
    for (let left = reconnects.quietUntil() - clock.now(); left > 0; left = reconnects.quietUntil() - clock.now()) {
      if ((await client.get(key(sessionId))) !== null) return;
      await sleep(Math.min(left, Math.max(50, leaseMs / 6))); // a holder renews every third of a lease
    }
  }

  /** The store identity the held leases were taken under: leases of one since replaced are forgotten, not renewed. */
  let heldUnder: string | undefined;
  async function claim(sessionId: string): Promise<string> {
    const storeId = options.store?.storeId() ?? '';
    if (storeId !== heldUnder) held.clear(); // the store lost data: no renewal takes that for a take-over
    heldUnder = storeId;
    const before = held.get(sessionId);
    if (!before) await quietFor(sessionId);
    const sent = clock.now();
    const [owner, taken, issued] = (await client.eval(CLAIM, {
      keys: [key(sessionId), sessionFenceKey(keyPrefix, sessionId), `${keyPrefix}store-id`],
      arguments: [instanceId, String(leaseMs), before ? String(before.token) : '', storeId],
    })) as [string, number, string];
    if (taken === -1) {
      options.store?.noticed(undefined);
      throw storeChanged();
    }
    const token = Number(issued);
    if (before && token < before.token) {
      options.store?.noticed({ kind: 'fence', storeId, sessionId, held: before.token, found: token });
      held.delete(sessionId);
      throw storeChanged();
    }
    const lost = () => {
      log.warn({ sessionId, owner, token }, 'another instance took a session held here: dropping it here');
      options.onLost(sessionId);
    };
    if (owner === instanceId) {
      held.set(sessionId, { sent, token });
      if (before && before.token !== token) lost();
      if (taken === 1) await options.onTaken?.(sessionId);
    } else if (held.delete(sessionId)) lost();
    return owner;
  }

  let failing = false; // one warning per outage, not one per lease and renewal
  const renewer = setInterval(
    () => {
      for (const sessionId of held.keys()) {
        claim(sessionId).then(
          () => (failing = false),
          (err: unknown) => {
            if (err instanceof AppError && err.details.reason === 'storage') return; // the store checks say it
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
      const sent = held.get(sessionId)?.sent;
      const fresh = sent !== undefined && clock.now() - sent < leaseMs / 2 && client.isReady;
      return fresh ? Promise.resolve(instanceId) : claim(sessionId);
    },
    /** This instance's fencing token for the session: undefined unless it holds the session's lease. */
    fence: (sessionId: string): number | undefined => held.get(sessionId)?.token,
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
