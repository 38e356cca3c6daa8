import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { LimitsConfig } from '../config/schema.ts';
import { AppError } from '../errors/index.ts';

/** State of a client's window, as the X-RateLimit-* headers report it. */
export interface LimitState {
  limit: number;
  remaining: number;
  /** Unix seconds when the window resets. */
  resetTime: number;
  allowed: boolean;
}

/** A fixed-window limiter keyed by client (IP for REST, connection id for WebSocket messages). */
export function createWindowLimiter(points: number, durationSec: number, now: () => number = Date.now) {
  const limiter = new RateLimiterMemory({ points, duration: durationSec });
  const state = (res: RateLimiterRes, allowed: boolean): LimitState => ({
    limit: points,
    remaining: Math.max(0, res.remainingPoints),
    resetTime: Math.ceil((now() + res.msBeforeNext) / 1000),
    allowed,
  });
  return {
    async consume(key: string): Promise<LimitState> {
      try {
        return state(await limiter.consume(key), true);
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return state(rejection, false);
        throw rejection;
      }
    },
    /** Forgets a key (a closed connection). */
    async forget(key: string): Promise<void> {
      await limiter.delete(key);
    },
  };
}

export type WindowLimiter = ReturnType<typeof createWindowLimiter>;

export const rateLimitHeaders = (s: LimitState): Record<string, string> => ({
  'X-RateLimit-Limit': String(s.limit),
  'X-RateLimit-Remaining': String(s.remaining),
  'X-RateLimit-Reset': String(s.resetTime),
});

export function rateLimitError(s: LimitState, what: string): AppError {
  return new AppError('RATE_LIMIT_EXCEEDED', `Rate limit exceeded: ${s.limit} ${what}`, {
    limit: s.limit,
    remaining: 0,
    resetTime: s.resetTime,
  });
}

/** Counts open WebSocket connections per IP against `connectionsPerIp`. */
export function createConnectionCounter(max: number) {
  const open = new Map<string, number>();
  return {
    /** Takes a slot for the IP; false when it already holds `max`. */
    tryOpen(ip: string): boolean {
      const n = open.get(ip) ?? 0;
      if (n >= max) return false;
      open.set(ip, n + 1);
      return true;
    },
    close(ip: string): void {
      const n = (open.get(ip) ?? 1) - 1;
      if (n <= 0) open.delete(ip);
      else open.set(ip, n);
    },
    max,
  };
}

export function createLimits(config: LimitsConfig) {
  return {
    rest: createWindowLimiter(config.rest.points, config.rest.durationSec),
    ws: createWindowLimiter(config.ws.points, config.ws.durationSec),
    connections: createConnectionCounter(config.connectionsPerIp),
  };
}
export type Limits = ReturnType<typeof createLimits>;
