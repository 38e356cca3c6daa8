/** Webhooks: finished work announced through a durable outbox (docs/webhooks.md). */
import type { DeliveriesLimits } from '../config/schema.ts';
import type { Logger } from '../log/index.ts';
import { createRecordOutbox, type PendingCap } from './outbox-records.ts';
import type { Delivery, OutboxStore } from './outbox-store.ts';
import type { records } from '../store/index.ts';

export { createWebhookService, type WebhookService } from './service.ts';
export type { PushTarget } from './dispatcher.ts';
export type { WebhookCommands } from './messages.ts';
export { PUSH_HOLDER, WEBHOOK_HOLDER, pushTarget, type DeliveryMetrics } from './targets.ts';

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
 * The outbox on the sessions' medium: the record store there (opened by its owner); pending deliveries capped by
 * `limits`, each one refused told to `onRefused`.
 */
export const createOutboxStore = (
  store: records.RecordStore,
  log: Logger,
  options: { limits: DeliveriesLimits; onRefused?: (d: Delivery) => void },
): OutboxStore =>
  createRecordOutbox({
    ...{ records: store, log },
    ...{ keepFinishedMs: options.limits.keepFinishedMs, cap: pendingCapOf(options.limits) },
    ...(options.onRefused && { onRefused: options.onRefused }),
  });
