import { createJsonlStore } from './jsonl-store.ts';
import { createMemoryStore } from './memory-store.ts';
import { createPostgresStore } from './postgres/event-store.ts';
import { createRedisStore } from './redis-store.ts';
import type { EventStore, StorageConfig, StoreDeps, StoreEvent } from './types.ts';

export type * from './types.ts';
export { compareKeys, inRange } from './session-range.ts';
export { fencedError, isFenced } from './fenced.ts';
export {
  evidenceOf,
  isStoreLost,
  judgeLoss,
  seenUnder,
  storeLostError,
  type Loss,
  type LossEvidence,
} from './store-lost.ts';
export { createJsonlStore, type JsonlStoreOptions } from './jsonl-store.ts';
export { createMemoryStore } from './memory-store.ts';
export { createRedisStore, type RedisStoreOptions } from './redis-store.ts';
export { createPostgresStore, type PostgresEventStore, type PostgresStoreOptions } from './postgres/event-store.ts';
/** The one storage port for feature state (records/types.ts), its engines, typed layer and per-owner folded logs. */
export * as records from './records/index.ts';

/** The configured EventStore (a relative jsonl `dir` resolves against the working directory). */
export function createStore<E extends StoreEvent>(storage: StorageConfig, deps: StoreDeps<E>): EventStore<E> {
  switch (storage.type) {
    case 'jsonl':
      return createJsonlStore({ ...deps, dir: storage.dir });
    case 'memory':
      return createMemoryStore<E>(deps);
    case 'redis':
      return createRedisStore({
        ...deps,
        url: storage.url,
        keyPrefix: storage.keyPrefix,
        requireDurable: storage.requireDurable ?? false,
        replication: { replicas: storage.replicas ?? 0, timeoutMs: storage.replicaTimeoutMs ?? 2000 },
      });
    case 'postgres':
      return createPostgresStore({ ...deps, url: storage.url, schema: storage.schema, pool: storage.pool });
  }
}

/** The store with every append's latency reported to `observe` (seconds), failed ones included. */
export function timedAppends<E extends StoreEvent>(
  store: EventStore<E>,
  observe: (seconds: number) => void,
): EventStore<E> {
  return {
    ...store,
    async append(sessionId, events, fence, tail) {
      const started = performance.now();
      try {
        return await store.append(sessionId, events, fence, tail);
      } finally {
        observe((performance.now() - started) / 1000);
      }
    },
  };
}
