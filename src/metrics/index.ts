/**
 * Prometheus metrics for `GET /metrics`: one registry per app, with the default process metrics. Turn, tool and
 * server metrics are read off the bus (`watchBus`: a chunk costs one counter increment); what the bus cannot see
 * is fed by its owners through this object.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { STORED_EVENT, byFactType, type AgentEvents } from '../agent/index.ts';
import type { Bus } from '../bus/index.ts';
import type { Clock } from '../clock.ts';
import type { McpEvents } from '../tools/index.ts';

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'agentd_' });
  const registers = [registry];
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Counter<L>({ name, help, labelNames, registers });
  const histogram = <L extends string>(name: string, help: string, buckets: number[], labelNames: readonly L[] = []) =>
    new Histogram<L>({ name, help, labelNames, buckets, registers });
  const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Gauge<L>({ name, help, labelNames, registers });
  const m = {
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
    scheduleFires: counter('agentd_schedule_fires_total', 'Schedule ticks whose message was sent'),
    scheduleSkips: counter('agentd_schedule_skips_total', "Schedule ticks skipped while the previous run's turn ran"),
    scheduleFailures: counter('agentd_schedule_failures_total', 'Schedule fires whose message or turn failed'),
    scheduleLag: histogram('agentd_schedule_lag_seconds', 'From a tick to its message sent', SECONDS),
  };
  const statuses = new Map<string, string>();
  return {
    registry,
    contentType: registry.contentType,
    text: () => registry.metrics(),
    rejected: (surface: 'rest' | 'mcp' | 'ws_upgrade' | 'ws_message') => m.rejections.inc({ surface }),
    connections: (delta: 1 | -1) => m.connections.inc(delta),
    framePublished: () => m.framesOut.inc(),
    append: (seconds: number) => m.appendSeconds.observe(seconds),
    /** The scheduler's (src/schedules/schedule-metrics.ts). */
    schedules: { fires: m.scheduleFires, skips: m.scheduleSkips, failures: m.scheduleFailures, lag: m.scheduleLag },
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
    /** Reads turns, chunks, tokens, tool calls and server status off the bus. Returns the unsubscribe. */
    watchBus(bus: Pick<Bus<never, AgentEvents & McpEvents>, 'on'>, clock: Clock): () => void {
      const started = new Map<string, { at: number; chunked: boolean }>();
      const finish = (turnId: string, outcome: string) => {
        const turn = started.get(turnId);
        started.delete(turnId);
        m.turnsFinished.inc({ outcome });
        if (turn) m.turnSeconds.observe({ outcome }, (clock.now() - turn.at) / 1000);
      };
      /** A turn's end by a stored `turnFailed` or a transient error frame, counted once. */
      const failed = (turnId: string, details: Record<string, unknown>) => {
        if (started.has(turnId)) finish(turnId, details.reason === 'cancelled' ? 'cancelled' : 'error');
      };
      const offs = [
        bus.on(
          STORED_EVENT,
          byFactType({
            userMessage: (e) => {
              m.turnsStarted.inc();
              started.set(e.turnId, { at: clock.now(), chunked: false });
            },
            response: (e) => finish(e.turnId, 'response'),
            contextCompacted: (e) => m.compactions.inc({ trigger: e.trigger, method: e.method }),
            turnFailed: (e) => failed(e.turnId, e.details),
            toolResult: (e) => {
              const labels = { server: e.serverId || 'none', tool: e.toolName };
              m.toolCalls.inc({ ...labels, outcome: e.success ? 'ok' : 'error' });
              m.toolSeconds.observe(labels, e.durationMs / 1000);
            },
          }),
        ),
        bus.on('agent.chunk', (e) => {
          m.chunks.inc();
          const turn = started.get(e.payload.turnId);
          if (turn && !turn.chunked) {
            turn.chunked = true;
            m.firstChunkSeconds.observe((clock.now() - turn.at) / 1000);
          }
        }),
        bus.on('agent.error', (e) => e.payload.turnId !== undefined && failed(e.payload.turnId, e.payload.details)),
        bus.on('mcp.serverStatus', (e) => {
          const { name, status } = e.payload;
          const before = statuses.get(name);
          if (before) m.serverUp.set({ server: name, status: before }, 0);
          statuses.set(name, status);
          m.serverUp.set({ server: name, status }, status === 'disconnected' ? 0 : 1);
        }),
      ];
      return () => offs.forEach((off) => off());
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
