import { setTimeout as sleep } from 'node:timers/promises';
import { AppError, messageOf } from '../errors/index.ts';
import type { LeaseBackend } from './medium.ts';
import type { ClusterShared } from './shared.ts';

export interface LeaseOptions extends Pick<ClusterShared, 'instanceId' | 'leaseMs' | 'clock' | 'log'> {
  /** Where the leases live: Redis keys (redis-medium.ts) or the session rows on PostgreSQL (postgres-leases.ts). */
  backend: LeaseBackend;
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
 * Session ownership: one instance, the holder of its lease, runs a session's turns. `claim` answers the holder,
 * taking a free lease (rejects when the backend is unreachable). Held leases renew every `leaseMs / 3`, so a dead
 * holder loses them within `leaseMs`; a renewal finding another holder calls `onLost`, one failing keeps retrying.
 * `owner` is `claim` without the round trip while this instance's lease is fresh (its last confirming claim was sent
 * less than half a lease ago, so it cannot have expired, and nobody takes a lease before it expires) and the backend
 * is connected (else it rejects as `claim` does, so a caller hears of the outage at once).
 * For a lease after the backend came back (its `quietUntil`), `claim` takes no free lease this instance did not hold:
 * it waits until the lease has a holder again (a live one renews it) or the lease has passed, so a command that
 * reaches this instance first does not take a live owner's session (and resume a turn its caller was told had failed).
 * Fencing (issue 71): each lease comes with the session's fencing token (`fence`), which every write of the session
 * carries; a store refuses a token that is not the latest, so a holder paused past its lease writes nothing once
 * another instance took the session.
 */
export function createLeases(options: LeaseOptions) {
  const { backend, instanceId, leaseMs, clock, log } = options;
  /** Held leases: when the last claim that confirmed each was sent, and the session's fencing token. */
  const held = new Map<string, { sent: number; token: number }>();

  /** Resolves once the session's lease has a holder or the quiet after a reconnect is over. */
  async function quietFor(sessionId: string): Promise<void> {
    for (let left = backend.quietUntil() - clock.now(); left > 0; left = backend.quietUntil() - clock.now()) {
      if ((await backend.holder(sessionId)) !== null) return;
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
    const answer = await backend.claim(sessionId, instanceId, leaseMs, before?.token, storeId);
    const { holder: owner, taken, token } = answer;
    if (answer.storeChanged) {
      options.store?.noticed(undefined);
      throw storeChanged();
    }
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
      if (taken) await options.onTaken?.(sessionId);
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

  const giveUp = (sessionId: string, token: number) => backend.release(sessionId, instanceId, token);

  return {
    claim,
    /** Until when, after the backend came back, no free lease this instance did not hold is taken. */
    quietUntil: () => backend.quietUntil(),
    owner: (sessionId: string): Promise<string> => {
      const sent = held.get(sessionId)?.sent;
      const fresh = sent !== undefined && clock.now() - sent < leaseMs / 2 && backend.isReady();
      return fresh ? Promise.resolve(instanceId) : claim(sessionId);
    },
    /** This instance's fencing token for the session: undefined unless it holds the session's lease. */
    fence: (sessionId: string): number | undefined => held.get(sessionId)?.token,
    /** The instance holding the session's lease, if any (the lease is not taken). */
    holder: (sessionId: string): Promise<string | null> => backend.holder(sessionId),
    /** Gives the session's lease up (no-op unless held). */
    async release(sessionId: string): Promise<void> {
      const mine = held.get(sessionId);
      if (mine && held.delete(sessionId)) await giveUp(sessionId, mine.token);
    },
    /** Stops renewing and gives every lease up (a clean shutdown hands sessions over at once). */
    async close(): Promise<void> {
      clearInterval(renewer);
      backend.close();
      const all = [...held.entries()];
      held.clear();
      await Promise.all(all.map(([s, { token }]) => giveUp(s, token).catch(() => undefined)));
    },
  };
}
