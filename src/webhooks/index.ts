/** Webhooks: finished work announced through a durable outbox (docs/webhooks.md). */
import type { DeliveriesLimits } from '../config/schema.ts';
import type { Logger } from '../log/index.ts';
import type { StorageConfig } from '../store/index.ts';
import { createJsonlOutbox } from './outbox-jsonl.ts';
import { createRedisOutbox } from './outbox-redis.ts';
import { createRecordOutbox, type PendingCap } from './outbox-records.ts';
import type { Delivery, EarlierOutbox, OutboxStore } from './outbox-store.ts';
import type { records } from '../store/index.ts';

export { createWebhookService, type WebhookService } from './service.ts';
export type { PushTarget } from './dispatcher.ts';
export type { WebhookCommands } from './messages.ts';
export { PUSH_HOLDER, WEBHOOK_HOLDER, pushTarget, type DeliveryMetrics } from './targets.ts';

/** The outbox an earlier agentd kept on the medium `storage` names (its own file or keys), to be taken over. */
function earlierOutbox(storage: StorageConfig, log: Logger): EarlierOutbox | undefined {
  switch (storage.type) {
    case 'jsonl':
      return createJsonlOutbox({ dir: storage.dir, log });
    case 'memory':
      return undefined;
    case 'redis':
      return createRedisOutbox({ url: storage.url, keyPrefix: storage.keyPrefix, log });
  }
}

/** The cap `limits` put on a holder's pending deliveries (`webhook:<id>`, `push:<principal>`). */
export function pendingCapOf(limits: DeliveriesLimits): (holder: string) => PendingCap | undefined {
  return (holder) => {
    if (holder.startsWith('webhook:'))
      return { max: limits.pendingPerWebhook, setting: 'server.limits.deliveries.pendingPerWebhook' };
    if (holder.startsWith('push:'))
      return { max: limits.pendingPerPrincipal, setting: 'server.limits.deliveries.pendingPerPrincipal' };
    return undefined;
  };
}

/**
 * The outbox on the sessions' medium: the record store there (opened by its owner), taking over an earlier outbox;
 * pending deliveries capped by `limits`, each one refused told to `onRefused`.
 */
export const createOutboxStore = (
  storage: StorageConfig,
  store: records.RecordStore,
  log: Logger,
  options: { limits: DeliveriesLimits; onRefused?: (d: Delivery) => void },
): OutboxStore =>
  createRecordOutbox({
    ...{ records: store, log, legacy: earlierOutbox(storage, log) },
    ...{ keepFinishedMs: options.limits.keepFinishedMs, cap: pendingCapOf(options.limits) },
    ...(options.onRefused && { onRefused: options.onRefused }),
  });
