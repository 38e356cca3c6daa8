/** Webhooks: finished work announced through a durable outbox (docs/webhooks.md). */
import type { Logger } from '../log/index.ts';
import type { StorageConfig } from '../store/index.ts';
import { createJsonlOutbox } from './outbox-jsonl.ts';
import { createRedisOutbox } from './outbox-redis.ts';
import { createMemoryOutbox, type OutboxStore } from './outbox-store.ts';

export { createWebhookService, type WebhookService } from './service.ts';
export type { PushAnnouncer, PushTarget } from './dispatcher.ts';
export type { WebhookCommands } from './messages.ts';

/** The outbox on the medium `storage` names (beside the session logs, or in the sessions' Redis). */
export function createOutboxStore(storage: StorageConfig, log: Logger): OutboxStore {
  switch (storage.type) {
    case 'jsonl':
      return createJsonlOutbox({ dir: storage.dir, log });
    case 'memory':
      return createMemoryOutbox();
    case 'redis':
      return createRedisOutbox({ url: storage.url, keyPrefix: storage.keyPrefix, log });
  }
}
