/**
 * The metrics read off the bus: turns (started, finished by outcome, duration, time to first chunk), reply
 * chunks, compactions, tool calls and tool server status. A chunk costs one counter increment.
 */
import { STORED_EVENT, byFactType, type AgentEvents } from '../agent/index.ts';
import type { Bus } from '../bus/index.ts';
import type { Clock } from '../clock.ts';
import type { McpEvents } from '../tools/index.ts';
import type { MetricSet } from './definitions.ts';

/**
 * Feeds `m` from `bus` until the returned unsubscribe is called. `statuses` holds each tool server's last
 * status (shared by every watch of one metrics object, so a status gauge is reset once it changes).
 */
export function watchBusMetrics(
  m: MetricSet,
  statuses: Map<string, string>,
  bus: Pick<Bus<never, AgentEvents & McpEvents>, 'on'>,
  clock: Clock,
): () => void {
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
}
