/**
 * createApp's announcements of finished work (webhooks, A2A push): one outbox on the sessions' record store, and the
 * webhooks' service and dispatcher (which sends both kinds); and the spend ledger. `mounts`: the features made here
 * (the webhooks' routes, lifecycle and reaction; the usage report and the ledger's reaction), in their routes' order.
 */
import type { Clock } from '../clock.ts';
import type { AgentConfig } from '../config/index.ts';
import type { Logger } from '../log/index.ts';
import type { records } from '../store/index.ts';
import { spendOf } from './spend.ts';
import { createOutboxStore, createWebhookService, type DeliveryMetrics, type PushTarget } from '../webhooks/index.ts';
import { webhooksMount } from '../webhooks/feature/mount.ts';

type WebhookDeps = Parameters<typeof createWebhookService>[0];

export function announcementsOf(
  config: WebhookDeps['config'] & Pick<AgentConfig, 'budgets'>,
  deps: {
    bus: WebhookDeps['bus'] & Parameters<typeof webhooksMount>[0]['bus'];
    records: records.RecordStore;
    clock: Clock;
    log: Logger;
    addSecret: (secret: string) => void;
    /** A2A push's target, whose deliveries the dispatcher sends too (made after this). */
    push: () => PushTarget | undefined;
    metrics?: DeliveryMetrics;
  },
) {
  const log = deps.log.child({ component: 'webhooks' });
  const { metrics } = deps;
  const outbox = createOutboxStore(deps.records, log, {
    limits: config.server.limits.deliveries,
    ...(metrics && { onRefused: (d) => metrics.refused.inc({ kind: d.kind ?? 'webhook' }) }),
  });
  const webhooks = createWebhookService({
    ...{ config, bus: deps.bus, outbox, clock: deps.clock, log },
    ...{ addSecret: deps.addSecret, push: deps.push, ...(metrics && { metrics }) },
  });
  const spend = spendOf(config, deps);
  const mounts = [webhooksMount({ clock: deps.clock, bus: deps.bus, webhooks }), spend.mount];
  return { outbox, webhooks, spend, mounts };
}
