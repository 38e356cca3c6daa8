/**
 * `webhooks`: where finished work is announced (Standard Webhooks; docs/webhooks.md). The same shape serves the agent
 * file and `POST /api/webhooks`; the URL policy of remote tool servers (no link-local or metadata addresses) is
 * checked where webhooks start (src/webhooks), the scheme here.
 */
import { z } from 'zod';
import { proxySetting } from './tool-servers-schema.ts';

/** The events a webhook may ask for. */
export const WEBHOOK_EVENTS = [
  'turn.completed',
  'turn.failed',
  'question.asked',
  'question.expired',
  'session.deleted',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

/** The default wait before each retry, in ms: the first within seconds, then minutes, the last after an hour. */
export const DEFAULT_RETRY_SCHEDULE_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000];

/** A Standard Webhooks secret: `whsec_` and the base64 of 24 to 64 random bytes. */
const SECRET = /^whsec_(?:[A-Za-z0-9+/]{4}){8,22}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Whether a URL carries no user name or password (`https://user:pass@host/`: refused, it would be listed). */
const withoutCredentials = (url: string): boolean => {
  const parsed = URL.parse(url);
  return parsed === null || (parsed.username === '' && parsed.password === '');
};

export const webhookIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1 to 64 letters, digits, `_`, `.` or `-`');

export const webhookSchema = z.strictObject({
  id: webhookIdSchema
    .optional()
    .describe('Its id in `/api/webhooks/{id}` and in its deliveries. Default: `webhook-<n>` by its place in the list.'),
  url: z
    .url({ protocol: /^https?$/ })
    .refine(
      withoutCredentials,
      'must not carry credentials (`user:pass@`): deliveries are signed with `secret`, and a URL is listed by the API',
    )
    .describe(
      'Where deliveries are POSTed: `http:` or `https:`, without `user:pass@`, never a link-local or cloud-metadata address (the URL policy of runtime tool servers, `server.mcp`).',
    ),
  events: z
    .array(z.enum(WEBHOOK_EVENTS))
    .min(1)
    .describe(`The events it receives: any of ${WEBHOOK_EVENTS.map((e) => `\`${e}\``).join(', ')}.`),
  filter: z
    .strictObject({
      principal: z.string().min(1).optional().describe("Only sessions of this principal (a key's or JWT's owner)."),
      sessionId: z.string().min(1).optional().describe('Only this session (its id as clients name it).'),
    })
    .optional()
    .describe('Only the events of some sessions.'),
  secret: z
    .string()
    .regex(SECRET, 'must be `whsec_` followed by the base64 of 24 to 64 random bytes')
    .describe(
      'The signing secret (Standard Webhooks): `whsec_` and base64, e.g. `$WEBHOOK_SECRET`. Never shown by the API or the export.',
    ),
  retryScheduleMs: z
    .array(z.number().int().min(1).max(86_400_000))
    .max(20)
    .default(DEFAULT_RETRY_SCHEDULE_MS)
    .describe(
      'The wait before each retry of a failed delivery (5xx, 408, 429, timeout or network error), in ms; after the last, the delivery is given up. Default: 5 s, 30 s, 2 min, 10 min, 30 min, 1 h.',
    ),
  timeoutMs: z
    .number()
    .int()
    .min(100)
    .max(60_000)
    .default(10_000)
    .describe('How long an attempt waits for the answer before it counts as failed.'),
  proxy: proxySetting,
});

export type WebhookConfig = z.output<typeof webhookSchema>;
export type WebhookInput = z.input<typeof webhookSchema>;

export const webhooksSchema = z
  .array(webhookSchema)
  .default([])
  .refine((list) => new Set(list.map((w, i) => w.id ?? `webhook-${i + 1}`)).size === list.length, {
    message: 'two webhooks share an id',
  })
  .describe(
    'Signed HTTP callbacks when work finishes (Standard Webhooks), sent from a durable outbox at least once per event (docs/webhooks.md).',
  );
