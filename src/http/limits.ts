import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Clock } from '../clock.ts';
import type { LimitsConfig } from '../config/schema.ts';
import { AppError } from '../errors/index.ts';
import type { RedisConnection } from '../redis/index.ts';
import { errorReply, type Reply } from './respond.ts';

/** A client's window, as the X-RateLimit-* headers report it. */
export interface LimitState {
  limit: number;
  remaining: number;
  /** Unix seconds when the window resets. */
  resetTime: number;
  allowed: boolean;
  /** The window's length, in seconds. */
  windowSec: number;
}

/** A fixed-window limiter per key over rate-limiter-flexible's `limiter` (default in memory); `resetTime` by `clock`. */
export function createWindowLimiter(
  points: number,
  durationSec: number,
  clock: Clock,
  limiter: RateLimiterAbstract = new RateLimiterMemory({ points, duration: durationSec }),
) {
  const state = (res: RateLimiterRes, allowed: boolean): LimitState => ({
    limit: points,
    remaining: Math.max(0, res.remainingPoints),
    resetTime: Math.ceil((clock.now() + res.msBeforeNext) / 1000),
    allowed,
    windowSec: durationSec,
  });
  const unused = (): LimitState => ({
    limit: points,
    remaining: points,
    resetTime: Math.ceil(clock.now() / 1000) + durationSec,
    allowed: true,
    windowSec: durationSec,
  });
  return {
    /** Takes `cost` points (default 1). */
    async consume(key: string, cost = 1): Promise<LimitState> {
      try {
        return state(await limiter.consume(key, cost), true);
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return state(rejection, false);
        throw rejection;
      }
    },
    /** The window of `key` as it is, taking no point; never fails (an unreachable store reads as an unused window). */
    async peek(key: string): Promise<LimitState> {
      try {
        const res = await limiter.get(key);
        return res === null ? unused() : state(res, res.remainingPoints > 0);
      } catch {
        return unused();
      }
    },
    async forget(key: string): Promise<void> {
      await limiter.delete(key);
    },
  };
}

/** What the front end needs of a window limiter (an I/O-backed one fits). */
export type WindowLimiter = ReturnType<typeof createWindowLimiter>;

export const rateLimitHeaders = (s: LimitState): Record<string, string> => ({
  'X-RateLimit-Limit': String(s.limit),
  'X-RateLimit-Remaining': String(s.remaining),
  'X-RateLimit-Reset': String(s.resetTime),
});

/**
 * RATE_LIMIT_EXCEEDED for window `s`: the message names the window and `setting`, the config key that raises it.
 * `what`: what is counted, e.g. 'requests from this address'.
 */
export function rateLimitError(s: LimitState, what: string, setting: string): AppError {
  const message = `Rate limit exceeded: at most ${s.limit} ${what} per ${s.windowSec} s window (raise it with ${setting})`;
  return new AppError('RATE_LIMIT_EXCEEDED', message, {
    limit: s.limit,
    remaining: 0,
    resetTime: s.resetTime,
  });
}

/** `Retry-After`: seconds until the window resets, at least 1. */
export const retryAfterSeconds = (s: LimitState, clock: Clock): number =>
  Math.max(1, s.resetTime - Math.floor(clock.now() / 1000));

/** Open connections per IP, at most `max`. */
export function createConnectionCounter(max: number) {
  const open = new Map<string, number>();
  return {
    /** False when the IP already holds `max`. */
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

/**
 * The engines' gate for new HTTP connections: `counter` per peer, trusted proxies exempt (their clients are many).
 * A connection over the cap is answered 429 `RATE_LIMIT_EXCEEDED` with the X-RateLimit-* headers (the spec's
 * envelope), then closed: the cap has no window, so `resetTime` is now (a place frees when a connection closes).
 */
export function connectionGate(
  counter: Limits['httpConnections'],
  isTrustedProxy: (address: string) => boolean,
  clock: Clock,
) {
  return {
    open: (address: string): boolean => isTrustedProxy(address) || counter.tryOpen(address),
    close: (address: string): void => {
      if (!isTrustedProxy(address)) counter.close(address);
    },
    refusal: (): Reply => {
      const now = clock.now();
      const state = {
        limit: counter.max,
        remaining: 0,
        resetTime: Math.ceil(now / 1000),
        allowed: false,
        windowSec: 0,
      };
      const error = new AppError(
        'RATE_LIMIT_EXCEEDED',
        `Too many connections: at most ${counter.max} at once from this address (raise it with server.limits.connectionsPerIp)`,
        { limit: counter.max, remaining: 0, resetTime: state.resetTime },
      );
      const reply = errorReply(error, now);
      return { ...reply, headers: { ...rateLimitHeaders(state), ...reply.headers } };
    },
  };
}

export interface SharedLimitStore {
  client: RedisConnection;
  keyPrefix: string;
}

/**
 * The limiters of `config`, in memory or, with `shared`, in Redis so every instance counts the same windows
 * (the per-connection one stays in memory). While Redis is unreachable an in-memory insurance limiter counts
 * per instance: an outage never blocks or fails a request.
 */
export function createLimits(config: LimitsConfig, clock: Clock, shared?: SharedLimitStore) {
  const window = (name: string, { points, durationSec }: LimitsConfig['rest']): WindowLimiter => {
    if (!shared) return createWindowLimiter(points, durationSec, clock);
    const limiter = new RateLimiterRedis({
      storeClient: shared.client,
      useRedisPackage: true,
      rejectIfRedisNotReady: true,
      keyPrefix: `${shared.keyPrefix}limits:${name}`,
      points,
      duration: durationSec,
      insuranceLimiter: new RateLimiterMemory({ points, duration: durationSec }),
    });
    return createWindowLimiter(points, durationSec, clock, limiter);
  };
  return {
    /** Per IP, every HTTP request (WebSocket upgrades too). */
    rest: window('rest', config.rest),
    /** Per WebSocket connection, every frame. */
    ws: createWindowLimiter(config.ws.points, config.ws.durationSec, clock),
    /** Per IP, every WebSocket frame of all its connections (reconnecting keeps the count). */
    wsPerIp: window('wsip', { points: config.wsPerIp ?? 10 * config.ws.points, durationSec: config.ws.durationSec }),
    /** Per client IP (behind a trusted proxy, the forwarded one), open WebSockets. */
    connections: createConnectionCounter(config.connectionsPerIp),
    /** Per peer IP, open HTTP connections (idle keep-alives too; one that becomes a WebSocket leaves). */
    httpConnections: createConnectionCounter(config.connectionsPerIp),
  };
}

export type Limits = ReturnType<typeof createLimits>;
