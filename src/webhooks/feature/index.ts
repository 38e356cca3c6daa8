/**
 * Webhooks as a feature (Feature, src/http/feature-mount.ts): the one outbox of finished work announced, on the
 * sessions' record store, the webhooks' service and the dispatcher that sends from it, and its mount (admin routes,
 * commands, lifecycle, the reaction that keeps each stored fact's deliveries). Its port lends the outbox to A2A push,
 * whose deliveries the dispatcher sends too (`sendPushWith`).
 */
import type { Clock } from '../../clock.ts';
import type { Feature } from '../../http/feature-mount.ts';
import type { Logger } from '../../log/index.ts';
import type { records } from '../../store/index.ts';
import { createOutboxStore, createWebhookService, type DeliveryMetrics, type PushTarget } from '../index.ts';
import type { OutboxStore } from '../outbox-store.ts';
import type { WebhookServiceDeps } from '../service.ts';
import { webhooksMount } from './mount.ts';

export interface WebhooksGiven {
  config: WebhookServiceDeps['config'];
  bus: WebhookServiceDeps['bus'] & Parameters<typeof webhooksMount>[0]['bus'];
  records: records.RecordStore;
  clock: Clock;
  log: Logger;
  /** Learns a runtime webhook's secret, so every output redacts it. */
  addSecret: (secret: string) => void;
  metrics: { deliveries: DeliveryMetrics };
}

/** What other features and createApp reach the webhooks by. */
export interface WebhooksPort {
  /** The one outbox: A2A push keeps its notifications in it too. */
  outbox: OutboxStore;
  /** Looks for due deliveries at once (another feature added some). */
  wake: () => void;
  /** Has the dispatcher send the deliveries `target` owns (A2A push notifications) as `target` builds them. */
  sendPushWith: (target: PushTarget) => void;
  /** The agent deleted the session `key` (its `onSessionDeleted`). */
  sessionDeleted: (key: string) => void;
}

export const webhooksFeature: Feature<'webhooks', WebhooksGiven, WebhooksPort> = {
  name: 'webhooks',
  build({ config, bus, clock, addSecret, metrics: { deliveries: metrics }, ...given }) {
    const log = given.log.child({ component: 'webhooks' });
    const outbox = createOutboxStore(given.records, log, {
      limits: config.server.limits.deliveries,
      onRefused: (d) => metrics.refused.inc({ kind: d.kind ?? 'webhook' }),
    });
    let push: PushTarget | undefined; // set by A2A push as it is built, before the dispatcher starts
    const webhooks = createWebhookService({ config, bus, outbox, clock, log, addSecret, push: () => push, metrics });
    return {
      mount: webhooksMount({ clock, bus, webhooks }),
      port: {
        outbox,
        wake: () => webhooks.wake(),
        sendPushWith: (target) => void (push = target),
        sessionDeleted: (key) => webhooks.sessionDeleted(key),
      },
    };
  },
};
