/**
 * A2A push notifications as deliveries of the webhooks' durable outbox (src/webhooks/outbox-store.ts): the same
 * medium, ids, claims and retries as webhooks, one more kind of delivery whose request this module builds.
 * Contracts:
 * - `reaction` (`a2a-push`, src/agent/react: run for each stored fact on the session's owner from its own checkpoint,
 *   again after a crash before it) turns a stored fact that can change a task to completed, failed, canceled or
 *   input-required (a `response`, a `turnFailed`, a `questionAsked`) into one delivery per config of that task set
 *   before the fact was stored (`setAt`), read from the log as the task stood at that fact (its fixed body: v1.0
 *   `{ task }`, v0.3 the bare task). A delivery's id names the config, the task and the fact's seq, so every
 *   announcement of one fact, from any instance, makes one delivery. A task without a config costs no read of the
 *   store (one on redis: config-index.ts).
 * - A push delivery says so (`kind: 'a2a-push'`; one kept before kinds came is told by its `webhookId` prefix,
 *   `a2a-push/`, which it keeps for its listing) and carries `push: { sessionKey, turnId, taskId, configId }`.
 * - A push delivery's receiver is its principal's configs at the config URL's origin, and it counts toward its
 *   principal's pending notifications (`target`, `holder`: src/webhooks/targets.ts, capped by the outbox).
 * - Once a task's fact is completed, failed or canceled, its configs no longer count toward its principal's cap of
 *   configs (`configs.finished`, after the fact's deliveries were kept).
 * - `target.request(d, at)` builds an attempt's request (request.ts), its JWT signed at `at`; `undefined` when the
 *   config was deleted meanwhile (the dispatcher fails the delivery then, as for a removed webhook).
 */
import { createHash } from 'node:crypto';
import {
  encodeTask,
  FINAL_STATES,
  taskIdOf,
  taskView,
  type A2aPushConfigs,
  type PushConfig,
  type TaskState,
} from '../index.ts';
import type { Reaction, SessionStoredEvent, TurnFollower, TurnStep } from '../../agent/index.ts';
import type { Clock } from '../../clock.ts';
import { DEFAULT_RETRY_SCHEDULE_MS, type WebhookEventType } from '../../config/schema.ts';
import { sessionIdOf, splitSessionKey } from '../../session-id.ts';
import type { Delivery, OutboxStore } from '../../webhooks/outbox-store.ts';
import { PUSH_HOLDER, pushTarget } from '../../webhooks/targets.ts';
import { buildPushRequest, type OutboundRequest } from './request.ts';
import type { PushSigner } from '../../auth/notification-signer.ts';

export const PUSH_WEBHOOK_PREFIX = 'a2a-push/';

export interface PushDelivery extends Delivery {
  push: { sessionKey: string; turnId: string; taskId: string; configId: string };
}

/** The facts that can change a task to a state push announces. */
const PUSH_FACTS = new Set<SessionStoredEvent['event']['type']>(['response', 'turnFailed', 'questionAsked']);

/** The states announced, and the outbox's event type each is listed under. */
const ANNOUNCED: Partial<Record<TaskState, WebhookEventType>> = {
  completed: 'turn.completed',
  failed: 'turn.failed',
  canceled: 'turn.failed',
  'input-required': 'question.asked',
};

export const isPushDelivery = (d: Delivery): d is PushDelivery =>
  d.kind === 'a2a-push' || (d.kind === undefined && d.webhookId.startsWith(PUSH_WEBHOOK_PREFIX));

const deliveryId = (configId: string, eventId: string) =>
  `a2a_${createHash('sha256').update(`${configId}\n${eventId}`).digest('hex').slice(0, 32)}`;

export const notificationBody = (task: object, config: PushConfig): string =>
  JSON.stringify(config.version === '1.0' ? { task } : task);

export interface PushDeliveriesDeps {
  follower: Pick<TurnFollower, 'steps'>;
  configs: Pick<A2aPushConfigs, 'list'> & { finished?(sessionKey: string, turnId: string): Promise<void> };
  outbox: OutboxStore;
  signer: () => Promise<PushSigner>;
  /** The JWT's `iss` (the agent's name). */
  issuer: string;
  clock: Clock;
  /** Told when deliveries were added (the dispatcher's `wake`). */
  onAdded?: () => void;
}

export function createPushDeliveries(deps: PushDeliveriesDeps) {
  const { outbox, clock } = deps;

  /** The steps of a turn up to its fact of `seq`, and the `awaiting` of questions still open: the task then. */
  const upTo = (steps: TurnStep[], seq: number) => {
    const at = steps.findIndex((st) => st.kind === 'fact' && st.stored.seq === seq);
    const last = steps.at(-1);
    return at < 0 ? steps : [...steps.slice(0, at + 1), ...(last?.kind === 'awaiting' ? [last] : [])];
  };

  /** Keeps the notifications of the fact at `seq` (stored at `ts`); true when one was added. */
  async function announce(sessionKey: string, turnId: string, seq: number, ts: number): Promise<boolean> {
    const configs = await deps.configs.list(sessionKey, turnId);
    if (configs.length === 0) return false;
    const contextId = sessionIdOf(sessionKey);
    const view = taskView(contextId, turnId, upTo(await deps.follower.steps(sessionKey, turnId), seq));
    const type = view && ANNOUNCED[view.state];
    if (!view || !type) return false;
    const eventId = `${sessionKey}#${seq}#${view.state}`;
    const now = clock.now();
    const owner = splitSessionKey(sessionKey).owner;
    let added = false;
    for (const config of configs) {
      if (config.setAt !== undefined && ts < config.setAt) continue; // a fact before the config: not its news
      const d: PushDelivery = {
        ...{ kind: 'a2a-push', id: deliveryId(config.id, eventId), webhookId: `${PUSH_WEBHOOK_PREFIX}${config.id}` },
        ...{ eventId, type },
        ...{ status: 'pending', attempts: 0, createdAt: now, nextAttemptAt: now },
        body: notificationBody(encodeTask(view, config.version), config),
        push: { sessionKey, turnId, taskId: taskIdOf(contextId, turnId), configId: config.id },
        ...{ target: pushTarget(owner, config.url), holder: PUSH_HOLDER(owner) },
      };
      if (await outbox.add(d)) added = true;
    }
    if (FINAL_STATES.has(view.state)) await deps.configs.finished?.(sessionKey, turnId);
    if (added) deps.onAdded?.();
    return added;
  }

  return {
    /** Keeps the notifications of a stored fact; true when one was added. It throws when the outbox failed. */
    reaction: {
      name: 'a2a-push',
      handle: ({ sessionId, seq, ts, event: e }) =>
        PUSH_FACTS.has(e.type) && 'turnId' in e && e.turnId !== undefined
          ? announce(sessionId, e.turnId, seq, Date.parse(ts))
          : false,
    } satisfies Reaction,
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
