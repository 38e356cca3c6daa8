/**
 * Metrics always; traces when a span exporter is given, `server.tracing` is on or `OTEL_*` asks.
 * `observe(turnId)` measures one model request; `shutdown()` flushes the traces.
 */
import type { Clock } from '../clock.ts';
import type { AgentConfig } from '../config/schema.ts';
import type { RequestFor, RequestOutcome } from '../llm/index.ts';
import { splitSessionKey } from '../session-id.ts';
import { createMetrics } from '../metrics/index.ts';
import { createTracing, tracingWanted, type SpanExporter } from '../tracing/index.ts';
import type { AppBus } from './types.ts';

export function createObservability(
  config: AgentConfig,
  { bus, clock, env, spanExporter }: { bus: AppBus; clock: Clock; env: NodeJS.ProcessEnv; spanExporter?: SpanExporter },
) {
  const metrics = createMetrics();
  const unwatchMetrics = metrics.watchBus(bus, clock);
  const tracing =
    spanExporter || config.server.tracing || tracingWanted(env)
      ? createTracing(
          {
            agentName: config.name,
            provider: config.llm.provider,
            model: config.llm.model,
            ...(spanExporter && { exporter: spanExporter }),
          },
          env,
        )
      : undefined;
  const unwatchTraces = tracing?.watchBus(bus);
  const observe = ({ turnId, sessionId }: RequestFor) => {
    const endSpan = tracing?.modelRequest(turnId);
    const principal = sessionId === undefined ? undefined : splitSessionKey(sessionId).owner;
    return (outcome: RequestOutcome) => {
      metrics.modelRequest(outcome.ok, outcome.retries, outcome.usage);
      if (outcome.usage?.cost) metrics.modelCost(outcome.model, principal, outcome.usage.cost);
      endSpan?.(outcome);
    };
  };
  return {
    metrics,
    observe,
    unwatch(): void {
      unwatchMetrics();
      unwatchTraces?.();
    },
    shutdown: async (): Promise<void> => tracing?.shutdown(),
  };
}
