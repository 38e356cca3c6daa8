/**
 * Webhooks (docs/webhooks.md): the agent file's and those added at runtime (`webhooks.*` commands), fed from the
 * session's stored facts by a reaction (`reaction`, src/agent/react) into the durable outbox, and sent by the
 * dispatcher.
 * Contracts:
 * - With no webhook at all, a stored fact costs one lookup and nothing is written.
 * - A fact a webhook asks for (its events, its filter) becomes one delivery per webhook and fact id, whatever
 *   announces it how often: the body (`{ type, timestamp, data }`) and the id (`webhook-id`, the receiver's
 *   idempotency key) are fixed then, so a reaction run twice (a crash before its checkpoint) sends nothing twice.
 * - URLs pass the egress policy (`egress.allowPrivateNetworks`, `allowedHosts`, src/egress/policy.ts; never
 *   link-local or metadata) when the service opens (the agent file's: INVALID_REQUEST naming `webhooks.<n>.url`)
 *   and when added (`url`), and again on the resolved addresses at each attempt.
 * - Secrets never leave: records list no secret, and a runtime secret is redacted from every output.
 * - The dispatcher sends A2A push notifications (`push`, whose own reaction keeps them) from the same outbox.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Bus } from '../bus/index.ts';
import type { AgentEvents, Reaction, SessionStoredEvent } from '../agent/index.ts';
import type { Clock } from '../clock.ts';
import { webhookSchema, type AgentConfig, type WebhookInput } from '../config/schema.ts';
import { AppError } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import { egressPolicyOf } from '../egress/policy.ts';
import { checkUrl, type UrlPolicy } from '../egress/url-policy.ts';
import { createDispatcher, type PushTarget } from './dispatcher.ts';
import { WEBHOOK_HOLDER, type DeliveryMetrics } from './targets.ts';
import { deletedEvent, webhookEventOf, type WebhookEvent } from './events.ts';
import { registerWebhookCommands, webhookRecordOf, type Source } from './commands.ts';
import type { WebhookCommands, WebhookRecord } from './messages.ts';
import type { Delivery, OutboxStore, StoredWebhook } from './outbox-store.ts';

export interface WebhookServiceDeps {
  config: Pick<AgentConfig, 'webhooks' | 'server' | 'storage' | 'egress'>;
  bus: Pick<Bus<WebhookCommands, AgentEvents>, 'handle' | 'on'>;
  outbox: OutboxStore;
  clock: Clock;
  log: Logger;
  /** Learns a runtime webhook's secret, so every output redacts it. */
  addSecret?: (secret: string) => void;
  /** The A2A push notifications' target, whose deliveries share the outbox (read at each send). */
  push?: () => PushTarget | undefined;
  pollMs?: number;
  metrics?: Pick<DeliveryMetrics, 'circuitsOpened'>;
}

const deliveryId = (webhookId: string, eventId: string) =>
  `msg_${createHash('sha256').update(`${webhookId}\n${eventId}`).digest('hex').slice(0, 32)}`;

const wants = (hook: StoredWebhook, e: WebhookEvent, data: { sessionId?: unknown; principal?: unknown }) =>
  hook.events.includes(e.type) &&
  (hook.filter?.sessionId === undefined || hook.filter.sessionId === data.sessionId) &&
  (hook.filter?.principal === undefined || hook.filter.principal === data.principal);

/** Keeps one delivery per webhook that wants `e` (an existing id is kept as it is); true when one was added. */
async function keepDeliveries(
  outbox: OutboxStore,
  hooks: { hook: StoredWebhook }[],
  e: WebhookEvent,
  now: number,
): Promise<boolean> {
  const body = JSON.stringify({ type: e.type, timestamp: e.timestamp, data: e.data });
  let added = false;
  for (const { hook } of hooks) {
    if (!wants(hook, e, e.data)) continue;
    const d: Delivery = {
      ...{ kind: 'webhook', id: deliveryId(hook.id, e.id), webhookId: hook.id, eventId: e.id, type: e.type },
      ...{ status: 'pending', attempts: 0, createdAt: now, nextAttemptAt: now, body },
      ...{ target: WEBHOOK_HOLDER(hook.id), holder: WEBHOOK_HOLDER(hook.id) },
    };
    if (await outbox.add(d)) added = true;
  }
  return added;
}

/** The URL policy's refusal of `url` as INVALID_REQUEST naming `field`. */
function checked(url: string, field: string, policy: UrlPolicy): void {
  try {
    checkUrl(url, policy);
  } catch (err) {
    if (err instanceof AppError) throw new AppError('INVALID_REQUEST', err.message, { ...err.details, field });
    throw err;
  }
}

export function createWebhookService(deps: WebhookServiceDeps) {
  const { outbox, clock, log } = deps;
  const policy: UrlPolicy = egressPolicyOf(deps.config);
  const hooks = new Map<string, { hook: StoredWebhook; source: Source }>();
  deps.config.webhooks.forEach((w, i) =>
    hooks.set(w.id ?? `webhook-${i + 1}`, { hook: { ...w, id: w.id ?? `webhook-${i + 1}` }, source: 'config' }),
  );

  /** Runtime webhooks as the outbox holds them (another instance may have added or deleted some). */
  async function refresh(): Promise<void> {
    const stored = await outbox.webhooks();
    for (const [id, h] of hooks) if (h.source === 'api' && !stored.some((s) => s.id === id)) hooks.delete(id);
    for (const hook of stored) if (!hooks.has(hook.id)) learn(hook);
  }
  const learn = (hook: StoredWebhook) => {
    deps.addSecret?.(hook.secret);
    const password = URL.parse(hook.url)?.password; // a URL kept before they were refused
    if (password) deps.addSecret?.(decodeURIComponent(password));
    hooks.set(hook.id, { hook, source: 'api' });
  };
  /** Keeps the deliveries of a stored fact; true when one was added. */
  const announceFact = (stored: SessionStoredEvent): Promise<boolean> =>
    announce(hooks.size > 0 ? webhookEventOf(stored) : undefined);
  const dispatcher = createDispatcher({
    outbox,
    webhook: (id) => hooks.get(id)?.hook,
    refresh,
    ...(deps.push && { push: deps.push }),
    policy,
    clock,
    log,
    ...(deps.pollMs !== undefined && { pollMs: deps.pollMs }),
    limits: deps.config.server.limits.deliveries,
    ...(deps.metrics && { metrics: deps.metrics }),
  });

  async function announce(e: WebhookEvent | undefined): Promise<boolean> {
    const added = e !== undefined && (await keepDeliveries(outbox, [...hooks.values()], e, clock.now()));
    if (added) dispatcher.wake();
    return added;
  }
  /** Keeps deliveries in the background: a failure is logged with `fields`. */
  const inBackground = (keeping: Promise<unknown>, fields: Record<string, unknown>): void =>
    void keeping.catch((err: unknown) => log.error({ err, ...fields }, 'webhook outbox: could not keep a delivery'));

  async function add(input: WebhookInput): Promise<WebhookRecord> {
    const parsed = webhookSchema.parse(input);
    checked(parsed.url, 'url', policy);
    const hook: StoredWebhook = { ...parsed, id: parsed.id ?? `webhook-${randomUUID().slice(0, 8)}` };
    if (hooks.has(hook.id) || !(await outbox.addWebhook(hook)))
      throw new AppError('INVALID_REQUEST', `A webhook "${hook.id}" exists`, { field: 'id', reason: 'exists' });
    learn(hook);
    dispatcher.poll();
    log.info({ webhookId: hook.id, events: hook.events }, 'webhook added');
    return webhookRecordOf({ hook, source: 'api' });
  }

  const unsubscribe: (() => void)[] = [];
  return {
    /** Checks the agent file's URLs, opens the outbox and reads the runtime webhooks. */
    async open(): Promise<void> {
      [...hooks.values()].forEach(({ hook }, i) => checked(hook.url, `webhooks.${i}.url`, policy));
      await outbox.open();
      await refresh();
    },
    /** Looks for due deliveries at once (a push notification was added). */
    wake: () => dispatcher.wake(),
    /**
     * The reaction to stored facts (the agent's reactions run it on the session's owner, from its checkpoint): true
     * when it kept a delivery. It throws when the outbox failed, so the fact is handled again at the next open.
     */
    reaction: { name: 'webhooks', handle: announceFact } satisfies Reaction,
    start(): void {
      unsubscribe.push(
        ...registerWebhookCommands(deps.bus, {
          add,
          hooks,
          ofWebhook: (id, limit) => outbox.ofWebhook(id, limit),
          remove: async (id) => {
            await outbox.deleteWebhook(id);
            hooks.delete(id);
          },
        }),
      );
      // On redis another instance may add webhooks and deliveries: look every pollMs there.
      dispatcher.start(hooks.size > 0 || deps.config.storage.type === 'redis');
    },
    /** The agent deleted the session `key` (its `onSessionDeleted`). */
    sessionDeleted(key: string): void {
      if (hooks.size === 0) return;
      const e = deletedEvent(key, clock.now(), randomUUID());
      inBackground(announce(e), { eventId: e.id });
    },
    /** Hears no command and sends nothing more; the outbox still keeps what the reaction hands it. */
    async stop(): Promise<void> {
      for (const off of unsubscribe.splice(0)) off();
      await dispatcher.stop();
    },
    /** Closes the outbox (after the sessions, whose reactions write to it). */
    close: (): Promise<void> => outbox.close(),
  };
}
export type WebhookService = ReturnType<typeof createWebhookService>;
