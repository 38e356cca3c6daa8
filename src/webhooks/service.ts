/**
 * Webhooks (docs/webhooks.md): the agent file's and those added at runtime (`webhooks.*` commands), fed from the
 * session's stored facts on the bus (events.ts) into the durable outbox, and sent by the dispatcher.
 * Contracts:
 * - With no webhook at all, a stored fact costs one lookup and nothing is written.
 * - A fact a webhook asks for (its events, its filter) becomes one delivery per webhook and fact id, whatever
 *   announces it how often: the body (`{ type, timestamp, data }`) and the id (`webhook-id`) are fixed then.
 * - URLs pass the URL policy of runtime tool servers (`server.mcp.allowPrivateNetworks`, `allowedHosts`; never
 *   link-local or metadata) when the service opens (the agent file's: INVALID_REQUEST naming `webhooks.<n>.url`)
 *   and when added (`url`), and again on the resolved addresses at each attempt.
 * - Secrets never leave: records list no secret, and a runtime secret is redacted from every output.
 * - Given the turns' stored steps (`steps`), a fact stored just before the instance died is announced by the next
 *   one (recheck.ts).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Bus } from '../bus/index.ts';
import type { AgentEvents, TurnStep } from '../agent/index.ts';
import type { Clock } from '../clock.ts';
import { webhookSchema, type AgentConfig, type WebhookInput } from '../config/schema.ts';
import { AppError } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import { checkUrl, type UrlPolicy } from '../tools/spawn/url-policy.ts';
import { createDispatcher, type PushTarget } from './dispatcher.ts';
import { deletedEvent, WATCHED, webhookEventOf, type WebhookEvent } from './events.ts';
import { registerWebhookCommands, webhookRecordOf, type Source } from './commands.ts';
import type { WebhookCommands, WebhookRecord } from './messages.ts';
import type { Delivery, OutboxStore, StoredWebhook } from './outbox-store.ts';
import { createRecheck } from './recheck.ts';

export interface WebhookServiceDeps {
  config: Pick<AgentConfig, 'webhooks' | 'server' | 'storage'>;
  bus: Pick<Bus<WebhookCommands, AgentEvents>, 'handle' | 'on'>;
  outbox: OutboxStore;
  clock: Clock;
  log: Logger;
  /** Learns a runtime webhook's secret, so every output redacts it. */
  addSecret?: (secret: string) => void;
  /** The A2A push notifications' target, whose deliveries share the outbox (read when a delivery is sent). */
  push?: () => PushTarget | undefined;
  /** A turn's stored steps (the turn follower's): with it, a fact its instance died before announcing is not lost. */
  steps?: (sessionKey: string, turnId: string) => Promise<TurnStep[]>;
  pollMs?: number;
}

const deliveryId = (webhookId: string, eventId: string) =>
  `msg_${createHash('sha256').update(`${webhookId}\n${eventId}`).digest('hex').slice(0, 32)}`;

export function createWebhookService(deps: WebhookServiceDeps) {
  const { outbox, clock, log } = deps;
  const policy: UrlPolicy = {
    allowPrivateNetworks: deps.config.server.mcp.allowPrivateNetworks,
    allowedHosts: deps.config.server.mcp.allowedHosts,
  };
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
    hooks.set(hook.id, { hook, source: 'api' });
  };
  const announceFrame = (name: string, payload: unknown, ts: number) => announce(webhookEventOf(name, payload, ts));
  const recheck = deps.steps && createRecheck({ outbox, steps: deps.steps, announce: announceFrame, log });
  const dispatcher = createDispatcher({
    outbox,
    webhook: (id) => hooks.get(id)?.hook,
    refresh,
    ...(deps.push && { push: deps.push }),
    ...(recheck && { local: recheck.target }),
    policy,
    clock,
    log,
    ...(deps.pollMs !== undefined && { pollMs: deps.pollMs }),
  });

  const wants = (hook: StoredWebhook, e: WebhookEvent, data: { sessionId?: unknown; principal?: unknown }) =>
    hook.events.includes(e.type) &&
    (hook.filter?.sessionId === undefined || hook.filter.sessionId === data.sessionId) &&
    (hook.filter?.principal === undefined || hook.filter.principal === data.principal);

  async function announce(e: WebhookEvent | undefined): Promise<void> {
    if (e === undefined) return;
    const body = JSON.stringify({ type: e.type, timestamp: e.timestamp, data: e.data });
    const now = clock.now();
    let added = false;
    for (const { hook } of hooks.values()) {
      if (!wants(hook, e, e.data)) continue;
      const d: Delivery = {
        ...{ id: deliveryId(hook.id, e.id), webhookId: hook.id, eventId: e.id, type: e.type },
        ...{ status: 'pending', attempts: 0, createdAt: now, nextAttemptAt: now, body },
      };
      if (await outbox.add(d)) added = true;
    }
    if (added) dispatcher.wake();
    const turnId = e.data.turnId;
    if (recheck && (e.type === 'turn.completed' || e.type === 'turn.failed') && typeof turnId === 'string')
      await recheck.ended(e.sessionKey, turnId, now);
  }
  const announced = (e: WebhookEvent | undefined): void =>
    void announce(e).catch((err: unknown) =>
      log.error({ err, eventId: e?.id }, 'webhook outbox: could not keep a delivery'),
    );

  const checked = (url: string, field: string) => {
    try {
      checkUrl(url, policy);
    } catch (err) {
      if (err instanceof AppError) throw new AppError('INVALID_REQUEST', err.message, { ...err.details, field });
      throw err;
    }
  };
  async function add(input: WebhookInput): Promise<WebhookRecord> {
    const parsed = webhookSchema.parse(input);
    checked(parsed.url, 'url');
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
      [...hooks.values()].forEach(({ hook }, i) => checked(hook.url, `webhooks.${i}.url`));
      await outbox.open();
      await refresh();
    },
    /** Looks for due deliveries at once (a push notification was added). */
    wake: () => dispatcher.wake(),
    start(): void {
      for (const name of WATCHED)
        unsubscribe.push(
          deps.bus.on(name, (e) => void (hooks.size > 0 && announced(webhookEventOf(e.name, e.payload, e.ts)))),
        );
      unsubscribe.push(
        deps.bus.on('agent.userMessage', (e) => hooks.size > 0 && recheck?.started(e.payload, clock.now())),
      );
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
      if (hooks.size > 0) announced(deletedEvent(key, clock.now(), randomUUID()));
    },
    async stop(): Promise<void> {
      for (const off of unsubscribe.splice(0)) off();
      await dispatcher.stop();
      await outbox.close();
    },
  };
}
export type WebhookService = ReturnType<typeof createWebhookService>;
