/** Memory per principal (src/memory): the service, and the engines on the sessions' medium. */
import type { AgentConfig } from '../config/index.ts';
import type { Logger } from '../log/index.ts';
import type { RedisConnection } from '../redis/index.ts';
import { createJsonlMemoryAuditLog, createJsonlMemoryLogStore } from './jsonl-log-store.ts';
import { createMemoryAuditLog, createMemoryLogStore } from './memory-log-store.ts';
import { createRedisMemoryAuditLog, createRedisMemoryLogStore } from './redis-log-store.ts';
import type { MemoryAuditLog, MemoryLogStore } from './types.ts';

export * from './types.ts';
export { createMemoryService, type MemoryServiceDeps } from './service.ts';
export { MEMORY_AUDIT_FILE, MEMORY_DIR, memoryFileName } from './jsonl-log-store.ts';
export { memoryAuditKey, memoryKey } from './redis-log-store.ts';

/**
 * The memory log and audit log beside the sessions: JSONL files in their folder, Redis lists on the cluster's
 * connection (`redis`, connected once the app is open), or memory.
 */
export function memoryStoresOf(
  storage: AgentConfig['storage'],
  log: Logger,
  redis: RedisConnection | undefined,
): { store: MemoryLogStore; audit: MemoryAuditLog } {
  if (storage.type === 'jsonl')
    return {
      store: createJsonlMemoryLogStore(storage.dir, log),
      audit: createJsonlMemoryAuditLog(storage.dir, log),
    };
  if (storage.type === 'redis' && redis)
    return {
      store: createRedisMemoryLogStore(redis, storage.keyPrefix, log),
      audit: createRedisMemoryAuditLog(redis, storage.keyPrefix, log),
    };
  return { store: createMemoryLogStore(), audit: createMemoryAuditLog() };
}
