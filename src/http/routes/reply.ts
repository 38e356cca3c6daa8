import type { Clock } from '../../clock.ts';
import type { RouteResult } from '../route.ts';

/** ISO 8601 UTC with milliseconds, read from the injected clock. */
export const isoNow = (clock: Clock): string => new Date(clock.now()).toISOString();

/** Builds route replies whose body carries `timestamp` from the injected clock (last, so it cannot be overridden). */
export const createReply =
  (clock: Clock) =>
  <B extends object>(body: B): RouteResult & { body: B & { timestamp: string } } => ({ body: { ...body, timestamp: isoNow(clock) } });
