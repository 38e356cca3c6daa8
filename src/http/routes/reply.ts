import type { Clock } from '../../clock.ts';
import type { RouteResult } from '../route.ts';

/**
 * Route replies whose body ends with `timestamp` (of `at`, default now; last, so the body cannot override it).
 * Literal values keep their types, so `defineRoute` checks them against its response schema.
 */
export const createReply =
  (clock: Clock) =>
  <const B extends object>(body: B, at: number = clock.now()): RouteResult & { body: B & { timestamp: string } } => ({
    body: { ...body, timestamp: new Date(at).toISOString() },
  });
