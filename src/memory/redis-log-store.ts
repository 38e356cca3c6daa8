/**
 * The memory engines on Redis, shared by every instance of the key prefix: one list per owner,
 * `<prefix>memory:<sha256 of the owner>` (one RPUSH per append, so an append is whole or absent), and the audit list
 * `<prefix>memory-audit`. `erase` deletes the owner's key. While Redis is unreachable every call fails at once with
 * SERVICE_UNAVAILABLE (`reason: "storage"`).
 */
import type { z } from 'zod';
import { AppError, isAppError, messageOf } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import type { RedisConnection } from '../redis/index.ts';
import {
  MemoryAuditRecordSchema,
  MemoryEventSchema,
  ownerDigest,
  parseEntry,
  type MemoryAuditLog,
  type MemoryEvent,
  type MemoryLogStore,
} from './types.ts';

/** The key of `owner`'s log. */
export const memoryKey = (prefix: string, owner: string): string => `${prefix}memory:${ownerDigest(owner)}`;
export const memoryAuditKey = (prefix: string): string => `${prefix}memory-audit`;

const unavailable = (err: unknown): never => {
  if (isAppError(err)) throw err;
  const cause = messageOf(err);
  throw new AppError('SERVICE_UNAVAILABLE', `The memory store (Redis) is unavailable: ${cause}`, {
    reason: 'storage',
    cause,
  });
};

function parseAll<S extends z.ZodType>(entries: string[], schema: S, key: string, log: Logger): z.output<S>[] {
  const parsed: z.output<S>[] = [];
  for (const text of entries) {
    const entry = parseEntry(schema, text);
    if (entry === undefined) log.warn({ key }, 'memory store: skipped an entry that does not parse');
    else parsed.push(entry);
  }
  return parsed;
}

export function createRedisMemoryLogStore(redis: RedisConnection, prefix: string, log: Logger): MemoryLogStore {
  return {
    async append(owner, events) {
      if (events.length === 0) return;
      await redis
        .rPush(
          memoryKey(prefix, owner),
          events.map((e) => JSON.stringify(e)),
        )
        .catch(unavailable);
    },
    async read(owner): Promise<MemoryEvent[]> {
      const key = memoryKey(prefix, owner);
      return parseAll(await redis.lRange(key, 0, -1).catch(unavailable), MemoryEventSchema, key, log);
    },
    async erase(owner) {
      await redis.del(memoryKey(prefix, owner)).catch(unavailable);
    },
    close: () => Promise.resolve(),
  };
}

export function createRedisMemoryAuditLog(redis: RedisConnection, prefix: string, log: Logger): MemoryAuditLog {
  const key = memoryAuditKey(prefix);
  return {
    async record(record) {
      await redis.rPush(key, JSON.stringify(record)).catch(unavailable);
    },
    read: async () => parseAll(await redis.lRange(key, 0, -1).catch(unavailable), MemoryAuditRecordSchema, key, log),
  };
}
