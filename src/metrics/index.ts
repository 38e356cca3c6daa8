/**
 * Prometheus metrics for `GET /metrics`: one registry per app, with the default process metrics. Turn, tool and
 * server metrics are read off the bus (`watchBus`: a chunk costs one counter increment); what the bus cannot see
 * is fed by its owners through this object.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AgentEvents } from '../agent/index.ts';
import type { Bus } from '../bus/index.ts';
import type { Clock } from '../clock.ts';
import type { McpEvents } from '../tools/index.ts';

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'agentd_' });
  const registers = [registry];
  const m = {
    turnsStarted: new Counter({ name: 'agentd_turns_started_total', help: 'Turns started', registers }),
    turnsFinished: new Counter({
      name: 'agentd_turns_finished_total',
      help: 'Turns finished, by outcome',
      labelNames: ['outcome'],
      registers,
    }),
    turnSeconds: new Histogram({
      name: 'agentd_turn_duration_seconds',
      help: 'Turn duration, by outcome',
      labelNames: ['outcome'],
      buckets: SECONDS,
      registers,
    }),
    firstChunkSeconds: new Histogram({
      name: 'agentd_time_to_first_chunk_seconds',
      help: 'From a turn start to its first reply chunk',
      buckets: SECONDS,
      registers,
    }),
    chunks: new Counter({ name: 'agentd_reply_chunks_total', help: 'Reply chunks streamed', registers }),
    tokens: new Counter({
      name: 'agentd_model_tokens_total',
      help: 'Model tokens of every model request (summaries included), by direction (in: prompt, out: completion)',
      labelNames: ['direction'],
      registers,
    }),
    cacheTokens: new Counter({
      name: 'agentd_model_cache_tokens_total',
      help: 'Prompt tokens read from (read) and written to (write) the provider\'s prompt cache, part of agentd_model_tokens_total{direction="in"}',
      labelNames: ['kind'],
      registers,
    }),
    modelRequests: new Counter({
      name: 'agentd_model_requests_total',
      help: 'Model requests, by outcome',
      labelNames: ['outcome'],
      registers,
    }),
    modelRetries: new Counter({ name: 'agentd_model_retries_total', help: 'Model request retries', registers }),
    toolCalls: new Counter({
      name: 'agentd_tool_calls_total',
      help: 'Tool calls made for the model, by server, tool and outcome',
      labelNames: ['server', 'tool', 'outcome'],
      registers,
    }),
    toolSeconds: new Histogram({
      name: 'agentd_tool_call_duration_seconds',
      help: 'Tool call duration, by server and tool',
      labelNames: ['server', 'tool'],
      buckets: SECONDS,
      registers,
    }),
    serverUp: new Gauge({
      name: 'agentd_mcp_server_status',
      help: '1 for each tool server in its current status',
      labelNames: ['server', 'status'],
      registers,
    }),
    connections: new Gauge({ name: 'agentd_websocket_connections', help: 'Open WebSocket connections', registers }),
    framesOut: new Counter({
      name: 'agentd_websocket_frames_sent_total',
      help: 'Agent and server frames published to WebSocket clients',
      registers,
    }),
    rejections: new Counter({
      name: 'agentd_rate_limit_rejections_total',
      help: 'Requests or messages refused by a rate limit, by surface',
      labelNames: ['surface'],
      registers,
    }),
    compactions: new Counter({
      name: 'agentd_context_compactions_total',
      help: 'Conversation compactions stored, by trigger (threshold, overflow, manual) and method',
      labelNames: ['trigger', 'method'],
      registers,
    }),
    appendSeconds: new Histogram({
      name: 'agentd_store_append_seconds',
      help: 'Session log append latency',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1],
      registers,
    }),
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
      const offs = [
        bus.on('agent.userMessage', (e) => {
          m.turnsStarted.inc();
          started.set(e.payload.turnId, { at: clock.now(), chunked: false });
        }),
        bus.on('agent.chunk', (e) => {
          m.chunks.inc();
          const turn = started.get(e.payload.turnId);
          if (turn && !turn.chunked) {
            turn.chunked = true;
            m.firstChunkSeconds.observe((clock.now() - turn.at) / 1000);
          }
        }),
        bus.on('agent.response', (e) => finish(e.payload.turnId, 'response')),
        bus.on('agent.contextCompacted', (e) =>
          m.compactions.inc({ trigger: e.payload.trigger, method: e.payload.method }),
        ),
        bus.on('agent.error', (e) => {
          if (e.payload.turnId === undefined || !started.has(e.payload.turnId)) return;
          finish(e.payload.turnId, e.payload.details.reason === 'cancelled' ? 'cancelled' : 'error');
        }),
        bus.on('agent.toolResult', (e) => {
          const labels = { server: e.payload.serverId || 'none', tool: e.payload.toolName };
          m.toolCalls.inc({ ...labels, outcome: e.payload.success ? 'ok' : 'error' });
          m.toolSeconds.observe(labels, e.payload.durationMs / 1000);
        }),
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
