/**
 * OpenTelemetry traces in the GenAI semantic conventions: an `invoke_agent` span per turn, with a `chat` span per
 * model request and an `execute_tool` span per tool call inside it, exported over OTLP/HTTP as OTEL_* says. Turn and
 * tool spans are read off the bus; the model client reports requests. No prompt, reply or tool content is ever on a span.
 */
import { createRequire } from 'node:module';
import type * as OtelApi from '@opentelemetry/api';
import type { Span } from '@opentelemetry/api';
import type * as OtelExporter from '@opentelemetry/exporter-trace-otlp-http';
import type * as OtelResources from '@opentelemetry/resources';
import type * as OtelSdk from '@opentelemetry/sdk-trace-base';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { STORED_EVENT, byFactType, type AgentEvents } from '../agent/index.ts';
import type { Bus } from '../bus/index.ts';
import type { Usage } from '../llm/types.ts';

export type { SpanExporter };

/** OpenTelemetry's packages are loaded by createTracing only: an agentd without tracing never loads them. */
const require = createRequire(import.meta.url);

export interface TracingOptions {
  agentName: string;
  provider: string;
  model: string;
  /** Tests: spans go here at once (no batching). Otherwise OTLP/HTTP per the OTEL_* variables. */
  exporter?: SpanExporter;
}

/** A step's token counts, in the GenAI conventions' attributes. */
function usageOf(span: Span, usage: Usage | undefined): void {
  if (!usage) return;
  span.setAttribute('gen_ai.usage.input_tokens', usage.promptTokens);
  span.setAttribute('gen_ai.usage.output_tokens', usage.completionTokens);
}

/**
 * A priced step's cost, in the GenAI conventions' proposed attributes (semantic-conventions-genai#443): `source` is
 * `provider` (the provider's own figure), `table` or `config` (priced here).
 */
function costOf(span: Span, usage: Usage | undefined): void {
  const cost = usage?.cost;
  if (!cost) return;
  span.setAttribute('gen_ai.usage.cost.amount', cost.amount);
  span.setAttribute('gen_ai.usage.cost.currency', cost.currency);
  span.setAttribute('gen_ai.usage.cost.source', cost.source);
}

/** Whether the OTEL_* environment asks for traces. */
export function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  const exporter = env.OTEL_TRACES_EXPORTER;
  if (exporter !== undefined) return exporter !== 'none';
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

export function createTracing(opts: TracingOptions, env: NodeJS.ProcessEnv = process.env) {
  const { context, SpanKind, SpanStatusCode, trace } = require('@opentelemetry/api') as typeof OtelApi;
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof OtelExporter;
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof OtelResources;
  const { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor } =
    require('@opentelemetry/sdk-trace-base') as typeof OtelSdk;
  const exporter = opts.exporter ?? new OTLPTraceExporter();
  const processor = opts.exporter ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME ?? opts.agentName }),
    spanProcessors: [processor],
  });
  const tracer = provider.getTracer('agentd');
  const turns = new Map<string, Span>();
  const tools = new Map<string, Span>();
  const inTurn = (turnId: string | undefined) => {
    const turn = turnId === undefined ? undefined : turns.get(turnId);
    return turn ? trace.setSpan(context.active(), turn) : context.active();
  };
  const fail = (span: Span, type: string, message: string) => {
    span.setAttribute('error.type', type);
    span.setStatus({ code: SpanStatusCode.ERROR, message });
  };

  return {
    /** A model request of turn `turnId` starts; call the result when it ends. */
    modelRequest(turnId: string | undefined) {
      const span = tracer.startSpan(
        `chat ${opts.model}`,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.provider.name': opts.provider,
            'gen_ai.request.model': opts.model,
          },
        },
        inTurn(turnId),
      );
      return (outcome: { ok: boolean; retries: number; usage?: Usage | undefined; error?: string | undefined }) => {
        usageOf(span, outcome.usage);
        costOf(span, outcome.usage);
        if (outcome.retries > 0) span.setAttribute('agentd.model.retries', outcome.retries);
        if (!outcome.ok) fail(span, 'model_error', outcome.error ?? 'model request failed');
        span.end();
      };
    },
    /** Reads turns and tool calls off the bus. Returns the unsubscribe. */
    watchBus(bus: Pick<Bus<never, AgentEvents>, 'on'>): () => void {
      /** A turn's end by a stored `turnFailed` or a transient error frame, its span failed once. */
      const failTurn = (turnId: string, code: string, message: string) => {
        const span = turns.get(turnId);
        if (!span) return;
        turns.delete(turnId);
        fail(span, code, message);
        span.end();
      };
      const offs = [
        bus.on(
          STORED_EVENT,
          byFactType({
            userMessage: (e, stored) => {
              turns.set(
                e.turnId,
                tracer.startSpan(`invoke_agent ${opts.agentName}`, {
                  kind: SpanKind.INTERNAL,
                  attributes: {
                    'gen_ai.operation.name': 'invoke_agent',
                    'gen_ai.agent.name': opts.agentName,
                    'gen_ai.conversation.id': stored.sessionId,
                    'gen_ai.request.model': opts.model,
                  },
                }),
              );
            },
            toolCall: ({ callId, toolName, serverId, turnId }) => {
              tools.set(
                callId,
                tracer.startSpan(
                  `execute_tool ${toolName}`,
                  {
                    kind: SpanKind.INTERNAL,
                    attributes: {
                      'gen_ai.operation.name': 'execute_tool',
                      'gen_ai.tool.name': toolName,
                      'gen_ai.tool.call.id': callId,
                      'agentd.mcp.server': serverId,
                    },
                  },
                  inTurn(turnId),
                ),
              );
            },
            toolResult: (e) => {
              const span = tools.get(e.callId);
              tools.delete(e.callId);
              if (!span) return;
              if (!e.success) fail(span, 'tool_error', 'the tool call failed');
              span.end();
            },
            response: (e) => {
              const span = turns.get(e.turnId);
              turns.delete(e.turnId);
              if (!span) return;
              usageOf(span, e.usage);
              span.end();
            },
            turnFailed: (e) => failTurn(e.turnId, e.code, e.message),
          }),
        ),
        bus.on(
          'agent.error',
          (e) => e.payload.turnId !== undefined && failTurn(e.payload.turnId, e.payload.code, e.payload.message),
        ),
      ];
      return () => offs.forEach((off) => off());
    },
    shutdown: () => provider.shutdown(),
  };
}
