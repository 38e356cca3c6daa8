/**
 * Refreshing one record's tokens before they expire, one instance at a time (src/tools/oauth/client.ts).
 *
 * Contracts:
 * - `refreshAhead` does nothing unless the tokens are expiring, no refresh runs here already, and the last failed
 *   one is at least REFRESH_COOLDOWN_MS old; tokens another instance stored meanwhile are adopted instead.
 * - A refresh runs under the store's lease `<record key>-refresh` (REFRESH_LEASE_MS), so of the instances that find
 *   the same tokens expiring only one sends the grant (a rotated refresh token is good once); the others wait,
 *   re-reading the record every REFRESH_POLL_MS, and adopt its new tokens, or refresh themselves once the lease is
 *   free again (its holder failed or died). A store that cannot take the lease is logged and the refresh runs without it.
 * - It never throws: a failed refresh is logged, and the request goes on with the old tokens.
 */
import type { Clock } from '../../clock.ts';
import type { Logger } from '../../log/index.ts';
import type { Lease, SecretStore } from '../../store/secret-store.ts';

const REFRESH_COOLDOWN_MS = 5_000;
/** How long one instance's refresh may hold the others back (they then refresh themselves). */
export const REFRESH_LEASE_MS = 30_000;
const REFRESH_POLL_MS = 100;
const NO_LEASE: Lease = { release: () => Promise.resolve() };

export interface RefreshDeps {
  store: SecretStore;
  /** The record's key; the lease is `<key>-refresh`. */
  key: string;
  clock: Clock;
  log: Logger;
  /** The tokens held need refreshing now. */
  expiring(): boolean;
  /** Takes tokens another instance stored meanwhile; true when there were any. */
  adopt(): Promise<boolean>;
  /** A refresh can be sent at all (an interactive grant needs a refresh token). */
  possible(): boolean;
  /** Sends the grant; true when new tokens were stored. */
  refresh(): Promise<boolean>;
}

const reasonOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

export function createRefresher(deps: RefreshDeps) {
  const { store, key, clock, log } = deps;
  let running = false;
  let lastFailure = -Infinity;

  /** The refresh lease; `undefined` once another instance's refresh stored tokens to adopt. */
  const lease = async (): Promise<Lease | undefined> => {
    const giveUp = Date.now() + REFRESH_LEASE_MS;
    for (;;) {
      const taken = await store.claim(`${key}-refresh`, REFRESH_LEASE_MS).catch((err: unknown) => {
        log.warn({ reason: reasonOf(err) }, 'OAuth: the refresh lease could not be taken; refreshing without it');
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
        log.warn({ reason: reasonOf(err) }, 'OAuth token refresh failed');
      } finally {
        running = false;
        await held
          ?.release()
          .catch((err: unknown) =>
            log.warn({ reason: reasonOf(err) }, 'OAuth: the refresh lease could not be released; it expires by itself'),
          );
      }
    },
  };
}
