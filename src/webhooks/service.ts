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
 * - A2A push notifications (`push`) are announced here too, from the same facts, before the turn's recheck is done.
 * - Given the turns' stored steps (`steps`), a fact stored just before the instance died is announced by the next
 *   one (recheck.ts), to webhooks and push configs: a turn has a recheck while a webhook exists or its task has a
 *   push config (kept when the config is, too).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Bus } from '../bus/index.ts';
import { STORED_EVENT, toFrame, type AgentEvents, type TurnStep } from '../agent/index.ts';
import type { Clock } from '../clock.ts';
import { webhookSchema, type AgentConfig, type WebhookInput } from '../config/schema.ts';
import { AppError } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import { checkUrl, type UrlPolicy } from '../tools/spawn/url-policy.ts';
import { createDispatcher, type PushAnnouncer } from './dispatcher.ts';
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
  /** The A2A push notifications' target, whose deliveries share the outbox (read when a fact is heard or sent). */
  push?: () => PushAnnouncer | undefined;
  /** A turn's stored steps (the turn follower's): with it, a fact its instance died before announcing is not lost. */
  steps?: (sessionKey: string, turnId: string) => Promise<TurnStep[]>;
  pollMs?: number;
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
      ...{ id: deliveryId(hook.id, e.id), webhookId: hook.id, eventId: e.id, type: e.type },
      ...{ status: 'pending', attempts: 0, createdAt: now, nextAttemptAt: now, body },
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
  /** Keeps the deliveries of a stored frame (webhooks', push's); its turn's end then puts the recheck done. */
  async function announceFrame(name: string, payload: unknown, ts: number): Promise<void> {
    const hooked = hooks.size > 0;
    const e = hooked ? webhookEventOf(name, payload, ts) : undefined;
    await announce(e);
    const pushed = (await deps.push?.()?.announce(name, payload, ts)) ?? false;
    const { sessionId: key, turnId } = payload as { sessionId: string; turnId?: unknown };
    const end = name === 'agent.response' || (name === 'agent.error' && turnId !== undefined);
    if (recheck && end && typeof turnId === 'string' && (hooked || pushed))
      await recheck.ended(key, turnId, clock.now());
  }
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

  async function announce(e: WebhookEvent | undefined): Promise<void> {
    if (e && (await keepDeliveries(outbox, [...hooks.values()], e, clock.now()))) dispatcher.wake();
  }
  /** Keeps deliveries in the background: a failure is logged with `fields`. */
  const inBackground = (keeping: Promise<void>, fields: Record<string, unknown>): void =>
    void keeping.catch((err: unknown) => log.error({ err, ...fields }, 'webhook outbox: could not keep a delivery'));
  /** A turn's first frame: its recheck is kept while a webhook exists or its task has a push config. */
  async function turnStarted(payload: unknown): Promise<void> {
    const { sessionId, turnId } = payload as { sessionId: string; turnId?: string };
    if (!recheck || turnId === undefined) return;
    if (hooks.size > 0 || (await deps.push?.()?.has(sessionId, turnId))) keepRecheck({ sessionId, turnId });
  }
  /** Keeps a turn's recheck, and looks for due deliveries from then on (it falls due here too). */
  const keepRecheck = (frame: { sessionId: string; turnId?: string }) => {
    recheck?.started(frame, clock.now());
    dispatcher.poll();
  };

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
    /** A push config was kept on the task of `turnId`: its turn's recheck is kept (a failure logged). */
    recheckTurn: (sessionKey: string, turnId: string): void => keepRecheck({ sessionId: sessionKey, turnId }),
    start(): void {
      unsubscribe.push(
        deps.bus.on(STORED_EVENT, (e) => {
          const frame = toFrame(e.payload);
          const name = frame && (`agent.${frame.event}` as const);
          if (name && (WATCHED as readonly string[]).includes(name))
            inBackground(announceFrame(name, frame.data, e.ts), { event: name });
          if (frame?.event === 'userMessage')
            turnStarted(frame.data).catch((err: unknown) => log.error({ err }, 'webhook outbox: no recheck kept'));
        }),
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
      if (hooks.size === 0) return;
      const e = deletedEvent(key, clock.now(), randomUUID());
      inBackground(announce(e), { eventId: e.id });
    },
    async stop(): Promise<void> {
      for (const off of unsubscribe.splice(0)) off();
      await dispatcher.stop();
      await outbox.close();
    },
  };
}
export type WebhookService = ReturnType<typeof createWebhookService>;
