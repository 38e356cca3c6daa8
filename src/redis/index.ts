import { createRequire } from 'node:module';
import type * as NodeRedis from 'redis';
import type { Logger } from '../log/index.ts';

/**
 * A node-redis connection the agentd way, for each part that talks to Redis (the event store,
 * the shared rate limits).
 *
 * Contracts:
 * - No offline queue: while Redis is unreachable every command fails at once, so callers can
 *   answer SERVICE_UNAVAILABLE (or fall back) instead of hanging.
 * - `connect()` rejects at once when Redis cannot be reached the first time; once connected, a lost
 *   connection is retried with backoff (100 ms doubling, at most 2 s) for as long as it is open.
 * - A lost connection is logged once as a warning under `role` (the URL without its credentials),
 *   and its return as info.
 */
export function createRedisConnection(url: string, role: string, log: Logger) {
  const where = safeRedisUrl(url);
  let connected = false;
  // Loaded on first use (CommonJS): an agentd without Redis never loads the client.
  const { createClient } = createRequire(import.meta.url)('redis') as typeof NodeRedis;
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: 5000,
      reconnectStrategy: (retries: number) =>
        connected ? Math.min(100 * 2 ** retries, 2000) : new Error(`cannot reach Redis at ${where}`),
    },
  });
  let down = false; // one warning per outage, not one per reconnection attempt
  client.on('error', (err: Error) => {
    if (!down) log.warn({ err: err.message, redis: where }, `${role}: redis connection lost; reconnecting`);
    down = true;
  });
  client.on('ready', () => {
    if (down && connected) log.info({ redis: where }, `${role}: redis connection back`);
    down = false;
    connected = true;
  });
  return client;
}

export type RedisConnection = ReturnType<typeof createRedisConnection>;

/** The URL without its credentials, for messages and logs. */
export function safeRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return '(invalid URL)';
  }
}
