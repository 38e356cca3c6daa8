/**
 * Webhooks at runtime (docs/webhooks.md), admin only: add, list, read and delete them, and read a webhook's
 * deliveries with their state. Handlers validate input, then execute `webhooks.*` commands; no answer holds a secret.
 * A body the schema refuses is MISSING_FIELD or INVALID_REQUEST naming `details.field`, as for every route.
 */
import { z } from 'zod';
import type { Clock } from '../../clock.ts';
import { webhookSchema } from '../../config/schema.ts';
import type { Bus } from '../../bus/index.ts';
import { createReply, defineRoute, withTimestamp, type Route } from '../../http/feature-mount.ts';
import { deliveryRecord, webhookRecord, type WebhookCommands } from '../messages.ts';

/** The success bodies of these routes (the OpenAPI document publishes them). */
export const RESPONSES = {
  webhook: withTimestamp({ webhook: webhookRecord }),
  webhooks: withTimestamp({ webhooks: z.array(webhookRecord) }),
  deliveries: withTimestamp({ deliveries: z.array(deliveryRecord) }),
};

export const deliveriesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100).describe('At most this many, newest first'),
});

const webhookId = (params: Record<string, string>) => params.webhookId ?? '';

export function webhookRoutes(options: { clock: Clock; bus: Pick<Bus<WebhookCommands, never>, 'execute'> }): Route[] {
  const { bus } = options;
  const reply = createReply(options.clock);
  const admin = { scope: 'admin' as const };
  return [
    defineRoute({
      ...admin,
      method: 'POST',
      path: '/api/webhooks',
      summary: 'Add a webhook (Standard Webhooks deliveries of the events it names)',
      body: webhookSchema,
      example: {
        url: 'https://example.com/agentd-hook',
        events: ['turn.completed', 'turn.failed'],
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      },
      response: RESPONSES.webhook,
      errors: ['MISSING_FIELD', 'INVALID_REQUEST'],
      handler: async ({ body }) => reply({ webhook: await bus.execute('webhooks.add', body) }),
    }),
    defineRoute({
      ...admin,
      method: 'GET',
      path: '/api/webhooks',
      summary: "List the webhooks (the agent file's and those added at runtime)",
      response: RESPONSES.webhooks,
      handler: async () => reply({ webhooks: await bus.execute('webhooks.list', {}) }),
    }),
    defineRoute({
      ...admin,
      method: 'GET',
      path: '/api/webhooks/:webhookId',
      summary: 'Read a webhook',
      response: RESPONSES.webhook,
      errors: ['WEBHOOK_NOT_FOUND'],
      handler: async ({ params }) => reply({ webhook: await bus.execute('webhooks.get', { id: webhookId(params) }) }),
    }),
    defineRoute({
      ...admin,
      method: 'DELETE',
      path: '/api/webhooks/:webhookId',
      summary: 'Delete a webhook added at runtime, with its deliveries',
      response: RESPONSES.webhook,
      errors: ['WEBHOOK_NOT_FOUND', 'INVALID_REQUEST'],
      handler: async ({ params }) =>
        reply({ webhook: await bus.execute('webhooks.delete', { id: webhookId(params) }) }),
    }),
    defineRoute({
      ...admin,
      method: 'GET',
      path: '/api/webhooks/:webhookId/deliveries',
      summary: "A webhook's deliveries, newest first: status, attempts, last error, next attempt",
      query: deliveriesQuery,
      response: RESPONSES.deliveries,
      errors: ['WEBHOOK_NOT_FOUND'],
      handler: async ({ params, query }) =>
        reply({
          deliveries: await bus.execute('webhooks.deliveries', { id: webhookId(params), limit: query.limit }),
        }),
    }),
  ];
}
