/**
 * The record store (types.ts): one storage port for feature state on the sessions' medium, a typed layer over it
 * (collection.ts) and per-owner logs with kept folds (folded-log.ts).
 */
import type { StorageConfig } from '../types.ts';
import { createJsonlRecordStore } from './jsonl-engine.ts';
import { createMemoryRecordStore } from './memory-engine.ts';
import { createPostgresRecordStore } from './postgres-engine.ts';
import { createRedisRecordStore } from './redis-engine.ts';
import type { RecordStore, RecordStoreDeps } from './types.ts';

export type * from './types.ts';
export { createJsonlRecordStore, RECORDS_FILE, type JsonlRecordStoreOptions } from './jsonl-engine.ts';
export { createMemoryRecordStore } from './memory-engine.ts';
export { createRedisRecordStore, type RedisRecordStoreOptions } from './redis-engine.ts';
export { createPostgresRecordStore, type PostgresRecordStoreOptions } from './postgres-engine.ts';
export { collection, type Collection, type Item } from './collection.ts';
export { foldedLog, type AlsoOnAppend, type FoldedLog } from './folded-log.ts';

/** The record store on the medium `storage` names (a relative jsonl `dir` resolves against the working directory). */
export function createRecordStore(storage: StorageConfig, deps: RecordStoreDeps): RecordStore {
  switch (storage.type) {
    case 'jsonl':
      return createJsonlRecordStore({ ...deps, dir: storage.dir });
    case 'memory':
      return createMemoryRecordStore(deps);
    case 'redis':
      return createRedisRecordStore({
        ...deps,
        url: storage.url,
        keyPrefix: storage.keyPrefix,
        replication: { replicas: storage.replicas ?? 0, timeoutMs: storage.replicaTimeoutMs ?? 2000 },
      });
    case 'postgres':
      return createPostgresRecordStore({ ...deps, url: storage.url, schema: storage.schema, pool: storage.pool });
  }
}
