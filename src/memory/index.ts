/** Memory per principal (src/memory): the service, and the engines on the sessions' medium. */
import type { AgentConfig } from '../config/index.ts';
import type { Logger } from '../log/index.ts';
import type { RedisConnection } from '../redis/index.ts';
import type { records } from '../store/index.ts';
import { createKeptMemory, type KeptMemory } from './kept-memory.ts';
import { createJsonlMemoryAuditLog, createJsonlMemoryLogStore } from './jsonl-log-store.ts';
import { createMemoryAuditLog, createMemoryLogStore } from './memory-log-store.ts';
import { createRedisMemoryAuditLog, createRedisMemoryLogStore } from './redis-log-store.ts';
import type { MemoryAuditLog, MemoryLogStore } from './types.ts';

export * from './types.ts';
export { createMemoryService, type MemoryServiceDeps } from './service.ts';
export { createKeptMemory, type KeptMemory, type MemoryState } from './kept-memory.ts';
export { MEMORY_AUDIT_FILE, MEMORY_DIR, memoryFileName } from './jsonl-log-store.ts';
export { memoryAuditKey, memoryKey } from './redis-log-store.ts';

/**
 * The per-owner logs memory kept before the record store (JSONL files in the sessions' folder, Redis streams on the
 * cluster's connection, or memory), read to move an owner over, and the audit log of erasures beside the sessions.
 */
export function legacyMemoryStoresOf(
  storage: AgentConfig['storage'],
  log: Logger,
  redis: RedisConnection | undefined,
): { store: MemoryLogStore; audit: MemoryAuditLog } {
  if (storage.type === 'jsonl')
    return { store: createJsonlMemoryLogStore(storage.dir, log), audit: createJsonlMemoryAuditLog(storage.dir, log) };
  if (storage.type === 'redis' && redis)
    return {
      store: createRedisMemoryLogStore(redis, storage.keyPrefix, log),
      audit: createRedisMemoryAuditLog(redis, storage.keyPrefix, log),
    };
  return { store: createMemoryLogStore(), audit: createMemoryAuditLog() };
}

/**
 * Memory on the sessions' medium: each owner's log with its fold kept on the record store (`store`); what was kept
 * before it (legacyMemoryStoresOf, not on `memory`, which kept nothing) is moved over as owners are read.
 */
export function memoryStoresOf(
  storage: AgentConfig['storage'],
  log: Logger,
  redis: RedisConnection | undefined,
  store: records.RecordStore,
): { kept: KeptMemory; audit: MemoryAuditLog } {
  const legacy = legacyMemoryStoresOf(storage, log, redis);
  return {
    kept: createKeptMemory({ records: store, ...(storage.type !== 'memory' && { legacy: legacy.store }), log }),
    audit: legacy.audit,
  };
}
