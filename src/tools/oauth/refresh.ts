/**
 * Refreshing one record's tokens ahead of expiry (client.ts). `refreshAhead` never throws (a failure is logged and
 * the request goes on with the old tokens) and does nothing unless the tokens are expiring, none runs here and the
 * last failure is REFRESH_COOLDOWN_MS old; tokens another instance stored are adopted instead. The grant is sent under
 * the store's lease `<key>-refresh`, so only one instance sends it (a rotated refresh token is good once); the others
 * poll and adopt, or refresh once the lease is free. A store that cannot lease is logged and the refresh goes on.
 */
import type { Clock } from '../../clock.ts';
import type { Logger } from '../../log/index.ts';
import type { Lease, SecretStore } from '../../store/secret-store.ts';
import { messageOf } from '../../errors/index.ts';

const REFRESH_COOLDOWN_MS = 5_000;
/** How long one instance's refresh may hold the others back (they then refresh themselves). */
const REFRESH_LEASE_MS = 30_000;
const REFRESH_POLL_MS = 100;
const NO_LEASE: Lease = { release: () => Promise.resolve() };

export interface RefreshDeps {
  store: SecretStore;
  /** The record's key; the lease is `<key>-refresh`. */
  key: string;
  clock: Clock;
  log: Logger;
  expiring(): boolean;
  /** Takes tokens another instance stored meanwhile; true when there were any. */
  adopt(): Promise<boolean>;
  /** A refresh can be sent at all (an interactive grant needs a refresh token). */
  possible(): boolean;
  /** Sends the grant; true when new tokens were stored. */
  refresh(): Promise<boolean>;
}

export function createRefresher(deps: RefreshDeps) {
  const { store, key, clock, log } = deps;
  let running = false;
  let lastFailure = -Infinity;
  const warn = (err: unknown, message: string) => log.warn({ reason: messageOf(err) }, message);

  /** The refresh lease; `undefined` once another instance's refresh stored tokens to adopt. */
  const lease = async (): Promise<Lease | undefined> => {
    const giveUp = Date.now() + REFRESH_LEASE_MS;
    for (;;) {
      const taken = await store.claim(`${key}-refresh`, REFRESH_LEASE_MS).catch((err: unknown) => {
        warn(err, 'OAuth: the refresh lease could not be taken; refreshing without it');
        return NO_LEASE;
      });
      if (taken || Date.now() > giveUp) return taken ?? NO_LEASE;
      await new Promise((resolve) => setTimeout(resolve, REFRESH_POLL_MS));
      if ((await deps.adopt()) && !deps.expiring()) return undefined;
    }
  };

  return {
    /** A refresh of this record is under way here (its own token requests must not start another). */
    get running() {
      return running;
    },
    async refreshAhead(): Promise<void> {
      if (running || !deps.expiring() || clock.now() - lastFailure < REFRESH_COOLDOWN_MS) return;
      if ((await deps.adopt()) && !deps.expiring()) return;
      if (!deps.possible()) return;
      running = true;
      let held: Lease | undefined;
      try {
        held = await lease();
        if (!held) return log.debug('OAuth tokens refreshed by another instance');
        // The holder before us may have refreshed and released between our reads.
        if ((await deps.adopt()) && !deps.expiring()) return;
        if (await deps.refresh()) log.debug('OAuth tokens refreshed');
        else lastFailure = clock.now();
      } catch (err) {
        lastFailure = clock.now();
        warn(err, 'OAuth token refresh failed');
      } finally {
        running = false;
        await held
          ?.release()
          .catch((err: unknown) => warn(err, 'OAuth: the refresh lease could not be released; it expires by itself'));
      }
    },
  };
}
