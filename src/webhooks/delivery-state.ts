/**
 * A delivery's state after an attempt (pure), and what the dispatcher sends besides webhooks (A2A push notifications).
 */
import type { AttemptOutcome, AttemptRequest } from './attempt.ts';
import type { Delivery } from './outbox-store.ts';
import type { AttemptResult } from './targets.ts';

/** A delivery after an attempt at `now` with `outcome`. */
export function nextState(d: Delivery, outcome: AttemptOutcome, schedule: readonly number[], now: number): Delivery {
  const attempts = d.attempts + 1;
  const { lastError: _lastError, lastStatusCode: _lastStatusCode, ...rest } = d;
  const code = outcome.statusCode === undefined ? {} : { lastStatusCode: outcome.statusCode };
  if (outcome.delivered) return { ...rest, ...code, attempts, status: 'delivered', deliveredAt: now };
  const wait = outcome.retry ? schedule[attempts - 1] : undefined;
  const failed = { ...rest, ...code, attempts, lastError: outcome.error };
  return wait === undefined ? { ...failed, status: 'failed' } : { ...failed, nextAttemptAt: now + wait };
}

/** What an attempt's outcome says of its receiver: it answered, it did not (or said it could not), or nothing. */
export const resultOf = (o: AttemptOutcome): AttemptResult =>
  o.delivered || (!o.retry && o.statusCode !== undefined) ? 'answered' : o.retry ? 'failed' : 'neutral';

/** Deliveries of another kind than webhooks', sent by the dispatcher (A2A push notifications). */
export interface PushTarget {
  owns(d: Delivery): boolean;
  retryScheduleMs: readonly number[];
  timeoutMs: number;
  /** The attempt's request at `at`, or undefined when what it was for is gone. */
  request(d: Delivery, at: number): Promise<AttemptRequest | undefined>;
}

export const gone = (error: string): AttemptOutcome => ({ delivered: false, retry: false, error });
