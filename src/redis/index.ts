import { createRequire } from 'node:module';
import type * as NodeRedis from 'redis';
import { AppError, isAppError, messageOf } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import { checkRedisDurability, type DurabilityCheck } from './durability.ts';

/**
 * A node-redis connection: no offline queue (while Redis is unreachable every command fails at once, never hangs);
 * `connect()` rejects when Redis cannot be reached the first time, later losses reconnect with backoff. An outage
 * is logged once under `role`, and its end.
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
  client.on('ready', () => (connected = true));
  watchOutages(client, {
    lost: (err) => log.warn({ err: err.message, redis: where }, `${role}: redis connection lost; reconnecting`),
    back: () => log.info({ redis: where }, `${role}: redis connection back`),
  });
  return client;
}

export type RedisConnection = ReturnType<typeof createRedisConnection>;

/** How long apart a connection back from an outage asks again whether Redis has loaded its dataset. */
const LOADING_PROBE_MS = 200;

/**
 * Tells `on` of each outage of `client` once, however many reconnection attempts fail in it (`lost`, with the first
 * error), and of its end (`back`, once the connection is ready again and Redis answers reads: a Redis that restarts
 * accepts connections while it loads its dataset, refusing every read and write with LOADING meanwhile, and a
 * `back` then would send writes to be refused with no later `back` to try them again). `ready`, when given, hears
 * the connection ready again at once, before Redis is asked whether it loaded (commands sent from then on may
 * already be answered before `back`). Returns what stops it.
 */
export function watchOutages(
  client: Pick<RedisConnection, 'on' | 'off' | 'exists' | 'isReady'>,
  on: { lost(err: Error): void; back(): void; ready?(): void },
): () => void {
  let down = false;
  const onError = (err: Error) => {
    if (!down) on.lost(err);
    down = true;
  };
  const loaded = async (): Promise<boolean> => {
    for (;;) {
      try {
        await client.exists('agentd:loading-probe');
        return true;
      } catch (err) {
        if (!messageOf(err).startsWith('LOADING') || !client.isReady) return false; // the next ready asks again
        await new Promise((resolve) => setTimeout(resolve, LOADING_PROBE_MS).unref());
      }
    }
  };
  const onReady = () => {
    if (!down) return;
    on.ready?.();
    void loaded().then((yes) => {
      if (!yes || !down || !client.isReady) return;
      down = false;
      on.back();
    });
  };
  client.on('error', onError);
  client.on('ready', onReady);
  return () => {
    client.off('error', onError);
    client.off('ready', onReady);
  };
}

/**
 * Closes `client`, letting replies already on their way arrive for at most `graceMs`, then destroys it (their
 * commands reject). node-redis's own `close()` waits for them forever when Redis closed the socket meanwhile.
 */
export async function closeRedisConnection(client: RedisConnection, graceMs = 2000): Promise<void> {
  if (!client.isOpen) return;
  let timer: NodeJS.Timeout | undefined;
  const graceOver = new Promise<false>((resolve) => (timer = setTimeout(resolve, graceMs, false)));
  const closed = await Promise.race([
    client.close().then(
      () => true,
      () => true,
    ),
    graceOver,
  ]);
  clearTimeout(timer);
  if (!closed) client.destroy();
}

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

/**
 * The key of a session's fencing token on Redis: a number that grows each time an instance takes the session's lease
 * (src/cluster/leases.ts), which the session log's append compares (src/store/redis-scripts.ts); deleted with the
 * session's log. It shares the session's hash tag (one Cluster slot with its log and lease).
 */
export const sessionFenceKey = (keyPrefix: string, sessionId: string): string => `${keyPrefix}{s:${sessionId}}:fence`;

/**
 * How a store on Redis fails a call (`what`: the store, as users read it, e.g. "event store"): an AppError passes as
 * it is; anything else is logged once per call (`<what>: <op> failed`, the URL without credentials) and rejects as
 * SERVICE_UNAVAILABLE `reason: "storage"` with its cause.
 */
export const storageFailure =
  (log: Logger, where: string, what: string) =>
  (op: string) =>
  (err: unknown): never => {
    if (isAppError(err)) throw err;
    const cause = messageOf(err);
    log.error({ err: cause, redis: where }, `${what}: ${op} failed`);
    throw new AppError('SERVICE_UNAVAILABLE', `The ${what} (Redis) is unavailable: ${cause}`, {
      reason: 'storage',
      cause,
    });
  };

export { checkRedisDurability, DURABLE_REDIS, lossySettings, type DurabilityCheck } from './durability.ts';

/**
 * Connects a store's `client`: Redis unreachable rejects with SERVICE_UNAVAILABLE naming the URL (without credentials);
 * then checks Redis's durability settings (durability.ts): a refusal closes the connection and rejects.
 */
export async function connectChecked(
  client: RedisConnection,
  check: Omit<DurabilityCheck, 'where'> & { url: string },
): Promise<void> {
  const where = safeRedisUrl(check.url);
  try {
    await client.connect();
  } catch (err) {
    throw new AppError('SERVICE_UNAVAILABLE', `cannot reach Redis at ${where}: ${messageOf(err)}`, {
      reason: 'storage',
    });
  }
  try {
    await checkRedisDurability(client, { ...check, where });
  } catch (err) {
    await closeRedisConnection(client); // refused: the start ends here, nothing else closes it
    throw err;
  }
}
export { replicatedWrites, type Replication } from './replicated.ts';
