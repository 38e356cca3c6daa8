/** Webhooks: finished work announced through a durable outbox (docs/webhooks.md). */
import type { Logger } from '../log/index.ts';
import type { StorageConfig } from '../store/index.ts';
import { createJsonlOutbox } from './outbox-jsonl.ts';
import { createRedisOutbox } from './outbox-redis.ts';
import { createRecordOutbox } from './outbox-records.ts';
import type { OutboxStore } from './outbox-store.ts';
import type { records } from '../store/index.ts';

export { createWebhookService, type WebhookService } from './service.ts';
export type { PushAnnouncer, PushTarget } from './dispatcher.ts';
export type { WebhookCommands } from './messages.ts';

/** The outbox an earlier agentd kept on the medium `storage` names (its own file or keys), to be taken over. */
function earlierOutbox(storage: StorageConfig, log: Logger): OutboxStore | undefined {
  switch (storage.type) {
    case 'jsonl':
      return createJsonlOutbox({ dir: storage.dir, log });
    case 'memory':
      return undefined;
    case 'redis':
      return createRedisOutbox({ url: storage.url, keyPrefix: storage.keyPrefix, log });
  }
}

/** The outbox on the sessions' medium: the record store there (opened by its owner), taking over an earlier outbox. */
export const createOutboxStore = (storage: StorageConfig, store: records.RecordStore, log: Logger): OutboxStore =>
  createRecordOutbox({ records: store, log, legacy: earlierOutbox(storage, log) });
