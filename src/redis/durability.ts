import { AppError, messageOf } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';

/**
 * The Redis settings a store that never loses an acknowledged write needs, with the value each must have. `appendfsync
 * everysec` is not enough: Redis answers a write before its fsync, so a machine that stops (power, kernel) loses up to
 * a second of acknowledged writes; `always` fsyncs before it answers.
 */
export const DURABLE_REDIS = {
  appendonly: 'yes',
  appendfsync: 'always',
  'maxmemory-policy': 'noeviction',
} as const;

/** A connection as the check uses it (node-redis's `configGet`: `{ <name>: <value> }`). */
export interface ConfigReader {
  configGet(name: string): Promise<unknown>;
}

export interface DurabilityCheck {
  /** Refuse (reject) rather than warn when a setting can lose acknowledged writes. */
  requireDurable: boolean;
  log: Logger;
  /** The URL without credentials, for messages. */
  where: string;
}

/** Each setting of `got` that differs from DURABLE_REDIS, as `name is "value" (needs "wanted")`. */
export function lossySettings(got: Record<string, string | undefined>): string[] {
  return Object.entries(DURABLE_REDIS).flatMap(([name, wanted]) =>
    got[name] === wanted ? [] : [`${name} is "${got[name] ?? '(unset)'}" (needs "${wanted}")`],
  );
}

/**
 * Reads DURABLE_REDIS's settings from `client` (CONFIG GET) at start. A setting that can lose acknowledged writes is a
 * warning naming it, or, with `requireDurable`, a rejection (SERVICE_UNAVAILABLE, reason `storage`) naming each setting and the value it
 * needs. A Redis that refuses CONFIG GET (managed services rename or forbid it) is one warning, and the start goes on.
 */
export async function checkRedisDurability(client: ConfigReader, check: DurabilityCheck): Promise<void> {
  const got: Record<string, string | undefined> = {};
  try {
    for (const name of Object.keys(DURABLE_REDIS)) Object.assign(got, (await client.configGet(name)) as object);
  } catch (err) {
    check.log.warn(
      { redis: check.where, err: messageOf(err) },
      'redis store: cannot read appendonly, appendfsync and maxmemory-policy (CONFIG GET refused); make sure Redis keeps every acknowledged write',
    );
    return;
  }
  const lossy = lossySettings(got);
  if (lossy.length === 0) return;
  const message = `Redis at ${check.where} can lose acknowledged writes: ${lossy.join(', ')}`;
  if (check.requireDurable)
    throw new AppError('SERVICE_UNAVAILABLE', `${message}; storage.requireDurable refuses to start`, {
      reason: 'storage',
      settings: lossy,
    });
  check.log.warn({ redis: check.where, settings: lossy }, message);
}
