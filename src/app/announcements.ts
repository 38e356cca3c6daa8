/**
 * createApp's announcements of finished work (webhooks, A2A push): one outbox on the sessions' record store, the
 * webhooks' service and dispatcher (which sends both kinds), and the reactions that hand them each stored fact
 * (src/agent/react: caught up from their checkpoints when a session opens); the spend ledger is one of them. `mounts`:
 * the features made here (the webhooks' routes and lifecycle, the usage report), in their routes' order.
 */
import { createReactions } from '../agent/index.ts';
import type { Clock } from '../clock.ts';
import type { AgentConfig } from '../config/index.ts';
import type { Logger } from '../log/index.ts';
import type { records } from '../store/index.ts';
import { spendOf } from './spend.ts';
import {
  createOutboxStore,
  createWebhookService,
  type DeliveryMetrics,
  type PushAnnouncer,
} from '../webhooks/index.ts';
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
    /** A2A push's target (made after this). */
    push: () => PushAnnouncer | undefined;
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
  const reactions = createReactions({
    reactions: [webhooks.reaction, spend.reaction],
    records: deps.records,
    log: deps.log.child({ component: 'reactions' }),
    now: () => deps.clock.now(),
  });
  const mounts = [webhooksMount({ clock: deps.clock, bus: deps.bus, webhooks }), spend.mount];
  return { outbox, webhooks, reactions, spend, mounts };
}
