/**
 * The cap on sessions per principal (`server.limits.sessionsPerPrincipal`).
 *
 * Contracts:
 * - A holder is whoever creates sessions: a principal's name, or `ip:<address>` for anonymous callers.
 * - `admit` is called, in the session's tick, when a message is about to create a session (it has no
 *   log): past `limit` sessions it throws RATE_LIMIT_EXCEEDED (`details.limit`); a session already
 *   counted is admitted again freely. `forget` gives a session's room back (deleted, or never created).
 * - Owned namespaces (src/session-id.ts) are counted from the store on the holder's first creation
 *   here (`ready`), then kept up to date by this instance; the unnamed namespace (anonymous callers
 *   by IP, the shorthand keys) counts what this instance created since it started. With several
 *   instances each one enforces the cap on what it knows, so a principal may hold up to the cap per
 *   instance that created its sessions.
 * - Unnamed sessions (src/session-id.ts `isUnnamed`) are never counted: they expire when idle
 *   (src/agent/unnamed-expiry.ts), so one-shot calls never take a named session's room.
 */
import { AppError } from '../../errors/index.ts';
import { isUnnamed, splitSessionKey, UNNAMED_PREFIX, type SessionQuota } from '../../session-id.ts';
import type { EventStore, StoreEvent } from '../../store/types.ts';

/** A caller may not create a session with an unnamed id (it would hold sessions past the cap): INVALID_REQUEST. */
export function refuseUnnamed(key: string): void {
  if (isUnnamed(key))
    throw new AppError(
      'INVALID_REQUEST',
      `Session ids that begin with "${UNNAMED_PREFIX}" are made by agentd for sessions a caller did not name; pick another id`,
      { field: 'sessionId' },
    );
}

export function createSessionQuotas(store: Pick<EventStore<StoreEvent>, 'list'>) {
  const held = new Map<string, Set<string>>();
  const holderOf = new Map<string, string>();
  const seeding = new Map<string, Promise<void>>();

  const add = (holder: string, key: string) => {
    let keys = held.get(holder);
    if (!keys) held.set(holder, (keys = new Set()));
    keys.add(key);
    holderOf.set(key, holder);
  };

  async function seed(holder: string, owner: string): Promise<void> {
    const stored = await store.list();
    if (held.has(holder)) return;
    held.set(holder, new Set());
    for (const { id: key } of stored)
      if (splitSessionKey(key).owner === owner && !holderOf.has(key) && !isUnnamed(key)) add(holder, key);
  }

  return {
    /** Resolves once the holder's count is known (the first time, read from the store for an owned `key`). */
    ready(holder: string, key: string): Promise<void> {
      if (held.has(holder)) return Promise.resolve();
      const owner = splitSessionKey(key).owner;
      if (owner === undefined) return Promise.resolve();
      let pending = seeding.get(holder);
      if (!pending) {
        pending = seed(holder, owner).finally(() => seeding.delete(holder));
        seeding.set(holder, pending);
      }
      return pending;
    },
    admit({ holder, limit }: SessionQuota, key: string): void {
      const keys = held.get(holder);
      if (keys?.has(key) || isUnnamed(key)) return;
      if ((keys?.size ?? 0) >= limit) {
        throw new AppError('RATE_LIMIT_EXCEEDED', `At most ${limit} sessions per principal; delete one to make room`, {
          limit,
          remaining: 0,
          reason: 'sessions_per_principal',
        });
      }
      add(holder, key);
    },
    forget(key: string): void {
      const holder = holderOf.get(key);
      if (holder === undefined) return;
      holderOf.delete(key);
      const keys = held.get(holder);
      keys?.delete(key);
      if (keys?.size === 0 && splitSessionKey(key).owner === undefined) held.delete(holder);
    },
  };
}
export type SessionQuotas = ReturnType<typeof createSessionQuotas>;
