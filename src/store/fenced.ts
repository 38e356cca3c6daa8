/**
 * A write refused by its fence: the writer's token for the session is not the latest issued (another instance took
 * the session's lease since, src/cluster/leases.ts), so nothing of it was written. SERVICE_UNAVAILABLE with
 * `reason: "fenced"`: a caller waiting for the write may retry (it reaches the session's current owner).
 */
import { AppError, isAppError } from '../errors/index.ts';

export function fencedError(sessionId: string, token: number): AppError {
  return new AppError(
    'SERVICE_UNAVAILABLE',
    `Session ${sessionId} is run by another instance now: this instance's fencing token ${token} is stale`,
    { reason: 'fenced' },
  );
}

/** Whether a store refused `err`'s write for its fence. */
export const isFenced = (err: unknown): boolean => isAppError(err) && err.details.reason === 'fenced';
