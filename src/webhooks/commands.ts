/** The `webhooks.*` commands over the service's webhooks (messages.ts): records without secrets, NOT_FOUND by id. */
import type { Bus } from '../bus/index.ts';
import type { WebhookInput } from '../config/schema.ts';
import { AppError } from '../errors/index.ts';
import type { DeliveryRecord, WebhookCommands, WebhookRecord } from './messages.ts';
import type { Delivery, StoredWebhook } from './outbox-store.ts';

export type Source = 'config' | 'api';
type Held = { hook: StoredWebhook; source: Source };

/** A URL as listed: a password (in a URL kept before they were refused) never shown. */
const shownUrl = (url: string): string => {
  const parsed = URL.parse(url);
  if (!parsed?.password) return url;
  parsed.password = '***';
  return parsed.href;
};

export const webhookRecordOf = ({ hook, source }: Held): WebhookRecord => {
  const { secret: _secret, proxy: _proxy, ...shown } = hook;
  return { ...shown, url: shownUrl(hook.url), source };
};

const deliveryRecordOf = (d: Delivery): DeliveryRecord => {
  const {
    body: _body,
    kind: _kind,
    target: _target,
    holder: _holder,
    createdAt,
    nextAttemptAt,
    deliveredAt,
    ...rest
  } = d;
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    ...rest,
    createdAt: iso(createdAt),
    ...(d.status === 'pending' && { nextAttemptAt: iso(nextAttemptAt) }),
    ...(deliveredAt !== undefined && { deliveredAt: iso(deliveredAt) }),
  };
};

export function registerWebhookCommands(
  bus: Pick<Bus<WebhookCommands, Record<string, never>>, 'handle'>,
  ops: {
    add: (input: WebhookInput) => Promise<WebhookRecord>;
    hooks: ReadonlyMap<string, Held>;
    ofWebhook: (id: string, limit: number) => Promise<Delivery[]>;
    remove: (id: string) => Promise<void>;
  },
): (() => void)[] {
  const found = (id: string) => {
    const held = ops.hooks.get(id);
    if (!held) throw new AppError('WEBHOOK_NOT_FOUND', `No webhook "${id}"`, { webhookId: id });
    return held;
  };
  return [
    bus.handle('webhooks.add', ({ payload }) => ops.add(payload)),
    bus.handle('webhooks.list', () => [...ops.hooks.values()].map(webhookRecordOf)),
    bus.handle('webhooks.get', ({ payload }) => webhookRecordOf(found(payload.id))),
    bus.handle('webhooks.delete', async ({ payload }) => {
      const held = found(payload.id);
      if (held.source === 'config')
        throw new AppError('INVALID_REQUEST', `Webhook "${payload.id}" is in the agent file; remove it there`, {
          field: 'id',
          reason: 'config',
        });
      await ops.remove(payload.id);
      return webhookRecordOf(held);
    }),
    bus.handle('webhooks.deliveries', async ({ payload }) => {
      found(payload.id);
      return (await ops.ofWebhook(payload.id, payload.limit)).map(deliveryRecordOf);
    }),
  ];
}
