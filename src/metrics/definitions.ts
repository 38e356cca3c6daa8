/**
 * The metrics agentd keeps (names, help, labels and buckets), registered on one registry: what `GET /metrics`
 * lists besides the default process metrics.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** Registers every metric of agentd on `registry` and returns them by role. */
export function defineMetrics(registry: Registry) {
  const registers = [registry];
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Counter<L>({ name, help, labelNames, registers });
  const histogram = <L extends string>(name: string, help: string, buckets: number[], labelNames: readonly L[] = []) =>
    new Histogram<L>({ name, help, labelNames, buckets, registers });
  const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Gauge<L>({ name, help, labelNames, registers });
  return {
    turnsStarted: counter('agentd_turns_started_total', 'Turns started'),
    turnsFinished: counter('agentd_turns_finished_total', 'Turns finished, by outcome', ['outcome']),
    turnSeconds: histogram('agentd_turn_duration_seconds', 'Turn duration, by outcome', SECONDS, ['outcome']),
    firstChunkSeconds: histogram(
      'agentd_time_to_first_chunk_seconds',
      'From a turn start to its first reply chunk',
      SECONDS,
    ),
    chunks: counter('agentd_reply_chunks_total', 'Reply chunks streamed'),
    tokens: counter(
      'agentd_model_tokens_total',
      'Model tokens of every model request (summaries included), by direction (in: prompt, out: completion)',
      ['direction'],
    ),
    cacheTokens: counter(
      'agentd_model_cache_tokens_total',
      'Prompt tokens read from (read) and written to (write) the provider\'s prompt cache, part of agentd_model_tokens_total{direction="in"}',
      ['kind'],
    ),
    modelCost: counter(
      'agentd_model_cost_total',
      'What model steps cost (summaries and sampling included), in currency units, by model, principal (the session owner; "none" without one) and currency',
      ['model', 'principal', 'currency'],
    ),
    modelRequests: counter('agentd_model_requests_total', 'Model requests, by outcome', ['outcome']),
    modelRetries: counter('agentd_model_retries_total', 'Model request retries'),
    toolCalls: counter('agentd_tool_calls_total', 'Tool calls made for the model, by server, tool and outcome', [
      'server',
      'tool',
      'outcome',
    ]),
    toolSeconds: histogram('agentd_tool_call_duration_seconds', 'Tool call duration, by server and tool', SECONDS, [
      'server',
      'tool',
    ]),
    serverUp: gauge('agentd_mcp_server_status', '1 for each tool server in its current status', ['server', 'status']),
    connections: gauge('agentd_websocket_connections', 'Open WebSocket connections'),
    framesOut: counter('agentd_websocket_frames_sent_total', 'Agent and server frames published to WebSocket clients'),
    rejections: counter(
      'agentd_rate_limit_rejections_total',
      'Requests or messages refused by a rate limit, by surface',
      ['surface'],
    ),
    compactions: counter(
      'agentd_context_compactions_total',
      'Conversation compactions stored, by trigger (threshold, overflow, manual) and method',
      ['trigger', 'method'],
    ),
    appendSeconds: histogram(
      'agentd_store_append_seconds',
      'Session log append latency',
      [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1],
    ),
    storeDataLost: counter(
      'agentd_store_data_lost_total',
      'Times this instance found its store gone back in time (data lost: emptied, restored, failed over behind) and adopted a new store id',
    ),
    scheduleFires: counter('agentd_schedule_fires_total', 'Schedule ticks whose message was sent'),
    scheduleSkips: counter('agentd_schedule_skips_total', "Schedule ticks skipped while the previous run's turn ran"),
    scheduleFailures: counter('agentd_schedule_failures_total', 'Schedule fires whose message or turn failed'),
    scheduleLag: histogram('agentd_schedule_lag_seconds', 'From a tick to its message sent', SECONDS),
    deliveriesRefused: counter(
      'agentd_deliveries_refused_total',
      'Deliveries not queued (kept as failed) because their webhook or principal was at its cap of pending ones, by kind (webhook, a2a-push)',
      ['kind'],
    ),
    deliveryCircuitsOpened: counter(
      'agentd_delivery_circuits_opened_total',
      "Times a delivery receiver's circuit opened (failed attempts in a row, or a failed probe)",
    ),
  };
}

export type MetricSet = ReturnType<typeof defineMetrics>;
