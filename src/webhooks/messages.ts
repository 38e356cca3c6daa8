/**
 * The webhooks' bus contract and the records the outside sees (docs/webhooks.md): a webhook as listed (never its
 * secret) and a delivery with its state. The REST routes execute these commands; src/webhooks answers them.
 */
import { z } from 'zod';
import { WEBHOOK_EVENTS, type WebhookInput } from '../config/schema.ts';

export const webhookRecord = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENTS)),
  filter: z.object({ principal: z.string().optional(), sessionId: z.string().optional() }).optional(),
  retryScheduleMs: z.array(z.number().int()),
  timeoutMs: z.number().int(),
  source: z.enum(['config', 'api']).describe('`config`: from the agent file (not deletable); `api`: added at runtime'),
});
export type WebhookRecord = z.infer<typeof webhookRecord>;

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

export const deliveryRecord = z.object({
  id: z.string().describe('The `webhook-id` header: the same on every attempt (receivers de-duplicate with it)'),
  webhookId: z.string(),
  eventId: z.string().describe('The stored fact it announces (session key, seq and type)'),
  type: z.enum(WEBHOOK_EVENTS),
  status: z.enum(DELIVERY_STATUSES).describe('`failed`: given up after the retry schedule, or refused for good'),
  attempts: z.number().int(),
  createdAt: z.string(),
  nextAttemptAt: z.string().optional().describe('When the next attempt is due (pending only)'),
  deliveredAt: z.string().optional(),
  lastStatusCode: z.number().int().optional(),
  lastError: z.string().optional(),
});
export type DeliveryRecord = z.infer<typeof deliveryRecord>;

export type WebhookCommands = {
  /** Adds a webhook (INVALID_REQUEST naming `details.field` for a URL the policy refuses, CONFLICT-free: a taken id is refused). */
  'webhooks.add': { payload: WebhookInput; result: WebhookRecord };
  'webhooks.list': { payload: Record<string, never>; result: WebhookRecord[] };
  /** NOT_FOUND for an unknown id. */
  'webhooks.get': { payload: { id: string }; result: WebhookRecord };
  /** Removes a webhook added at runtime and its pending deliveries; NOT_FOUND for an unknown one. */
  'webhooks.delete': { payload: { id: string }; result: WebhookRecord };
  /** The webhook's deliveries, newest first, at most `limit`. */
  'webhooks.deliveries': { payload: { id: string; limit: number }; result: DeliveryRecord[] };
};
