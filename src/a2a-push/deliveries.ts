/**
 * A2A push notifications as deliveries of the webhooks' durable outbox (src/webhooks/outbox-store.ts): the same
 * medium, ids, claims and retries as webhooks, one more kind of delivery whose request this module builds.
 * Contracts:
 * - `announce` (a bus listener) turns each stored fact that changes a task to completed, failed, canceled or
 *   input-required into one delivery per config of that task, read from the log as the task stands (its fixed
 *   body: v1.0 `{ task }`, v0.3 the bare task). A delivery's id names the config, the task and the fact's seq, so
 *   every instance announcing one fact makes one delivery. A task without a config costs no read of the store
 *   (one on redis: config-index.ts).
 * - A push delivery is told apart by its `webhookId`, `a2a-push/<configId>` (no webhook id holds a `/`), and
 *   carries `push: { sessionKey, turnId, taskId, configId }`.
 * - `target.request(d, at)` builds an attempt's request (request.ts), its JWT signed at `at`; `undefined` when the
 *   config was deleted meanwhile (the dispatcher fails the delivery then, as for a removed webhook).
 */
import { createHash } from 'node:crypto';
import {
  encodeTask,
  taskIdOf,
  taskView,
  type A2aPushConfigs,
  type PushConfig,
  type TaskState,
} from '../a2a-face/index.ts';
import type { AgentEvents, TurnFollower } from '../agent/index.ts';
import type { Bus } from '../bus/index.ts';
import type { Clock } from '../clock.ts';
import { DEFAULT_RETRY_SCHEDULE_MS, type WebhookEventType } from '../config/schema.ts';
import type { Logger } from '../log/index.ts';
import { sessionIdOf } from '../session-id.ts';
import type { Delivery, OutboxStore } from '../webhooks/outbox-store.ts';
import { buildPushRequest, type OutboundRequest } from './request.ts';
import type { PushSigner } from '../auth/notification-signer.ts';

export const PUSH_WEBHOOK_PREFIX = 'a2a-push/';

export interface PushDelivery extends Delivery {
  push: { sessionKey: string; turnId: string; taskId: string; configId: string };
}

/** The bus events that can change a task to a state push announces. */
export const PUSH_WATCHED = [
  'agent.response',
  'agent.error',
  'agent.toolApprovalRequested',
  'agent.elicitationRequested',
  'agent.clientToolRequested',
] as const;

/** The states announced, and the outbox's event type each is listed under. */
const ANNOUNCED: Partial<Record<TaskState, WebhookEventType>> = {
  completed: 'turn.completed',
  failed: 'turn.failed',
  canceled: 'turn.failed',
  'input-required': 'question.asked',
};

export const isPushDelivery = (d: Delivery): d is PushDelivery => d.webhookId.startsWith(PUSH_WEBHOOK_PREFIX);

const deliveryId = (configId: string, eventId: string) =>
  `a2a_${createHash('sha256').update(`${configId}\n${eventId}`).digest('hex').slice(0, 32)}`;

export const notificationBody = (task: object, config: PushConfig): string =>
  JSON.stringify(config.version === '1.0' ? { task } : task);

export interface PushDeliveriesDeps {
  bus: Pick<Bus<Record<never, never>, AgentEvents>, 'on'>;
  follower: Pick<TurnFollower, 'steps'>;
  configs: Pick<A2aPushConfigs, 'list'>;
  outbox: OutboxStore;
  signer: () => Promise<PushSigner>;
  /** The JWT's `iss` (the agent's name). */
  issuer: string;
  clock: Clock;
  log: Logger;
  /** Told when deliveries were added (the dispatcher's `wake`). */
  onAdded?: () => void;
}

export function createPushDeliveries(deps: PushDeliveriesDeps) {
  const { outbox, clock, log } = deps;

  async function announce(sessionKey: string, turnId: string, seq: number): Promise<void> {
    const configs = await deps.configs.list(sessionKey, turnId);
    if (configs.length === 0) return;
    const contextId = sessionIdOf(sessionKey);
    const view = taskView(contextId, turnId, await deps.follower.steps(sessionKey, turnId));
    const type = view && ANNOUNCED[view.state];
    if (!view || !type) return;
    const eventId = `${sessionKey}#${seq}#${view.state}`;
    const now = clock.now();
    let added = false;
    for (const config of configs) {
      const d: PushDelivery = {
        ...{ id: deliveryId(config.id, eventId), webhookId: `${PUSH_WEBHOOK_PREFIX}${config.id}`, eventId, type },
        ...{ status: 'pending', attempts: 0, createdAt: now, nextAttemptAt: now },
        body: notificationBody(encodeTask(view, config.version), config),
        push: { sessionKey, turnId, taskId: taskIdOf(contextId, turnId), configId: config.id },
      };
      if (await outbox.add(d)) added = true;
    }
    if (added) deps.onAdded?.();
  }

  const unsubscribe: (() => void)[] = [];
  return {
    start(): void {
      for (const name of PUSH_WATCHED)
        unsubscribe.push(
          deps.bus.on(name, (e) => {
            const { sessionId, turnId, seq } = e.payload as { sessionId: string; turnId?: string; seq?: number };
            if (turnId === undefined) return;
            announce(sessionId, turnId, seq ?? 0).catch((err: unknown) =>
              log.error({ err, sessionId, turnId }, 'a2a push: could not keep a notification'),
            );
          }),
        );
    },
    stop(): void {
      for (const off of unsubscribe.splice(0)) off();
    },
    /** What the webhook dispatcher needs to send a push delivery (see docs/a2a.md, "Push notifications"). */
    target: {
      owns: isPushDelivery,
      retryScheduleMs: DEFAULT_RETRY_SCHEDULE_MS,
      timeoutMs: 10_000,
      async request(d: PushDelivery, at: number): Promise<OutboundRequest | undefined> {
        const { sessionKey, turnId, taskId, configId } = d.push;
        const config = (await deps.configs.list(sessionKey, turnId)).find((c) => c.id === configId);
        if (!config) return undefined;
        const signer = await deps.signer();
        const jwt = await signer.sign(
          { issuer: deps.issuer, audience: config.url, taskId, deliveryId: d.id, body: d.body },
          at,
        );
        return buildPushRequest(config, d.body, jwt);
      },
    },
  };
}
export type PushDeliveries = ReturnType<typeof createPushDeliveries>;
