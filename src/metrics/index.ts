/**
 * Prometheus metrics for `GET /metrics`: one registry per app, with the default process metrics. Turn, tool and
 * server metrics are read off the bus (`watchBus`: a chunk costs one counter increment); what the bus cannot see
 * is fed by its owners through this object.
 */
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { AgentEvents } from '../agent/index.ts';
import type { Bus } from '../bus/index.ts';
import type { Clock } from '../clock.ts';
import type { McpEvents } from '../tools/index.ts';
import { watchBusMetrics } from './bus-metrics.ts';
import { defineMetrics } from './definitions.ts';

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'agentd_' });
  const m = defineMetrics(registry);
  const statuses = new Map<string, string>();
  return {
    registry,
    contentType: registry.contentType,
    text: () => registry.metrics(),
    rejected: (surface: 'rest' | 'mcp' | 'ws_upgrade' | 'ws_message') => m.rejections.inc({ surface }),
    connections: (delta: 1 | -1) => m.connections.inc(delta),
    framePublished: () => m.framesOut.inc(),
    append: (seconds: number) => m.appendSeconds.observe(seconds),
    /** The store lost data (src/app/store-loss.ts). */
    storeDataLost: () => m.storeDataLost.inc(),
    /** The scheduler's (src/schedules/schedule-metrics.ts). */
    schedules: { fires: m.scheduleFires, skips: m.scheduleSkips, failures: m.scheduleFailures, lag: m.scheduleLag },
    /** The outbox's and its dispatcher's (src/webhooks/targets.ts). */
    deliveries: { refused: m.deliveriesRefused, circuitsOpened: m.deliveryCircuitsOpened },
    modelRequest: (
      ok: boolean,
      retries: number,
      usage?: { promptTokens: number; completionTokens: number; cachedTokens?: number; cacheWriteTokens?: number },
    ) => {
      m.modelRequests.inc({ outcome: ok ? 'ok' : 'error' });
      if (retries > 0) m.modelRetries.inc(retries);
      if (usage) {
        m.tokens.inc({ direction: 'in' }, usage.promptTokens);
        m.tokens.inc({ direction: 'out' }, usage.completionTokens);
        if (usage.cachedTokens) m.cacheTokens.inc({ kind: 'read' }, usage.cachedTokens);
        if (usage.cacheWriteTokens) m.cacheTokens.inc({ kind: 'write' }, usage.cacheWriteTokens);
      }
    },
    /** A priced model step: its cost, counted where the request was made (once, whichever instance watches). */
    modelCost: (model: string, principal: string | undefined, cost: { amount: number; currency: string }) =>
      m.modelCost.inc({ model, principal: principal ?? 'none', currency: cost.currency }, cost.amount),
    /** Reads turns, chunks, tokens, tool calls and server status off the bus. Returns the unsubscribe. */
    watchBus(bus: Pick<Bus<never, AgentEvents & McpEvents>, 'on'>, clock: Clock): () => void {
      return watchBusMetrics(m, statuses, bus, clock);
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
