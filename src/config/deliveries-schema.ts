/**
 * `server.limits.deliveries`: how the outbox's deliveries (webhooks, A2A push notifications) share agentd between
 * their receivers and their owners (docs/webhooks.md, "Fair between receivers"). Each receiver has its own queue,
 * in-flight limit and circuit; pending deliveries and push configs are capped per webhook and per principal.
 */
import { z } from 'zod';
import { positiveInt } from './numbers.ts';

const circuitSchema = z
  .strictObject({
    failures: positiveInt(5).describe(
      "Failed attempts in a row (no answer within the timeout, a network error, 408, 429 or 5xx) after which the receiver's circuit opens: its due deliveries wait, unattempted, for the next probe.",
    ),
    probeAfterMs: positiveInt(30_000).describe(
      'How long an open circuit waits before its probe (one delivery attempted), in ms; doubled after each failed probe.',
    ),
    maxProbeAfterMs: positiveInt(600_000).describe('The longest wait between two probes, in ms.'),
  })
  .describe(
    "The circuit each receiver has. A probe that gets an answer (anything but 408, 429 or 5xx) closes it. A delivery the circuit would hold past its creation plus its retry schedule's waits plus `maxProbeAfterMs` fails (`lastError` says the circuit was open).",
  );

export const deliveriesLimitsSchema = z
  .strictObject({
    inFlightPerTarget: positiveInt(4).describe(
      "Attempts one receiver (a webhook, or one principal's A2A push configs at one origin) has in flight at once; its other due deliveries wait in its own queue, so a slow or dead receiver delays only itself.",
    ),
    pendingPerWebhook: positiveInt(1000).describe(
      'Pending deliveries one webhook may hold: a delivery past it is not queued but kept as `failed` with `lastError` saying so (logged, counted in `agentd_deliveries_refused_total`).',
    ),
    pendingPerPrincipal: positiveInt(1000).describe(
      "Pending A2A push notifications of one principal's configs, all its tasks together; one past it is kept as `failed` as for `pendingPerWebhook`.",
    ),
    pushConfigsPerPrincipal: positiveInt(100).describe(
      "A2A push configs one principal may hold on tasks that are not finished (completed, failed or canceled tasks' configs are not counted; nor, after a week, any). One more is refused with 429 RATE_LIMIT_EXCEEDED (`details.reason: push_configs_per_principal`). Without auth every caller is one principal.",
    ),
    keepFinishedMs: positiveInt(7 * 24 * 3_600_000).describe(
      'How long delivered and failed deliveries stay listed (`GET /api/webhooks/{id}/deliveries`), in ms; then they are dropped from the store (JSONL: at its next compaction). A finished delivery keeps its state, not its body.',
    ),
    circuit: circuitSchema.prefault({}),
  })
  .describe(
    'Deliveries of webhooks and A2A push notifications: per-receiver queues and circuits, caps per webhook and per principal (docs/webhooks.md).',
  );

export type DeliveriesLimits = z.output<typeof deliveriesLimitsSchema>;
