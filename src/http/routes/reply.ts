import type { Clock } from '../../clock.ts';
import type { RouteResult } from '../route.ts';

/**
 * Builds route replies whose body carries `timestamp` (last, so it cannot be overridden) of `at`,
 * by default now on the injected clock. Literal values keep their literal types, so a typed route
 * (`defineRoute`) checks them against its response schema.
 */
export const createReply =
  (clock: Clock) =>
  <const B extends object>(body: B, at: number = clock.now()): RouteResult & { body: B & { timestamp: string } } => ({
    body: { ...body, timestamp: new Date(at).toISOString() },
  });
