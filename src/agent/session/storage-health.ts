/**
 * The agent's storage health, as `agent.health` reports it.
 *
 * Contracts:
 * - `degraded` from a failed append (its cause: the errno code or the message, and since when)
 *   until an append succeeds (`ok()`) or the store says its medium is back (the owner calls `ok()`).
 * - A second failure while degraded keeps the first cause and time.
 * - `lost(cause)` (the store lost data, src/app/store-loss.ts) degrades it until `recovered()`, whatever appends do;
 *   `recovered()` also ends what failed appends said (they were the loss's).
 */
import { isoNow, type Clock } from '../../clock.ts';
import { AppError, isAppError, messageOf } from '../../errors/index.ts';
import type { AgentHealth } from '../messages.ts';
import { isStoreLost } from '../../store/index.ts';

/** What a store failure says, without a stack: the errno code or the message. */
export function storageCause(err: unknown): string {
  const details = isAppError(err) ? err.details : {};
  return typeof details.cause === 'string' ? details.cause : messageOf(err);
}

/**
 * A command's refusal when its fact could not be stored: AGENT_ERROR, reason `storage`, naming `what`;
 * SERVICE_UNAVAILABLE when the store lost data (store-lost.ts: nothing was written, sending it again is safe).
 */
export const storageFailure = (what: string, err: unknown) =>
  new AppError(
    isStoreLost(err) ? 'SERVICE_UNAVAILABLE' : 'AGENT_ERROR',
    `The ${what} could not be stored (${storageCause(err)})`,
    {
      reason: 'storage',
      cause: storageCause(err),
    },
  );

export function createStorageHealth(clock: Clock) {
  let health: AgentHealth = { status: 'ready' };
  let loss: AgentHealth | undefined;
  return {
    lost(cause: string): void {
      loss ??= { status: 'degraded', cause: `storage: ${cause}`, since: isoNow(clock) };
    },
    recovered(): void {
      loss = undefined;
      health = { status: 'ready' }; // the writes that failed were the loss's: their sessions left memory
    },
    failed(err: unknown): void {
      if (health.status === 'ready')
        health = { status: 'degraded', cause: `storage: ${storageCause(err)}`, since: isoNow(clock) };
    },
    ok(): void {
      if (health.status !== 'ready') health = { status: 'ready' };
    },
    current: () => loss ?? health,
  };
}

/** Told of every append that failed and every one that succeeded. */
export type StorageHealth = Pick<ReturnType<typeof createStorageHealth>, 'failed' | 'ok'>;
