/**
 * One measurement window against one server: instant turns from keep-alive clients (lib/http-load)
 * or paced streams (lib/streams), with the server's CPU and RSS read from /proc (lib/procs) and the
 * simulator's, the load generator's and the rest of the machine's CPU over the same window.
 */
import { httpLoad, rawRequest } from '../lib/http-load.ts';
import { cpuWindow } from '../lib/procs.ts';
import { round } from '../lib/stats.ts';
import { agentdStreams, directStreams, sseStreams, type StreamLoad, type StreamResult } from '../lib/streams.ts';
import { mastraEvent } from '../lib/sse.ts';
import type { StreamsWindow, TurnsWindow } from './table.ts';

/** A server under load: its process (pinned) and how it takes an instant turn and a streamed one. */
export interface Target {
  name: string;
  pid: number;
  port: number;
  /** The raw request of client `conn`'s instant turn in round `round`. */
  turn: (round: number, conn: number) => Buffer;
  /** `load` streamed through this server. */
  streams: (load: StreamLoad) => Promise<StreamResult>;
}

const JSON_HEADERS = { authorization: 'Bearer bench-key' };

/** agentd: `POST /api/message-sync`, a session per client and round; streams over its WebSocket. */
export function agentdTarget(pid: number, port: number): Target {
  return {
    name: 'agentd',
    pid,
    port,
    turn: (round, conn) =>
      rawRequest('POST', '/api/message-sync', JSON.stringify({ message: 'hello', sessionId: `r${round}-c${conn}` })),
    streams: (load) => agentdStreams(`ws://127.0.0.1:${port}/`, load),
  };
}

/** The Mastra app: `POST /api/agents/bench/generate` (one JSON answer) and `/stream` (SSE). */
export function mastraTarget(pid: number, port: number): Target {
  const body = (content: string) => JSON.stringify({ messages: [{ role: 'user', content }] });
  return {
    name: 'mastra',
    pid,
    port,
    turn: () => rawRequest('POST', '/api/agents/bench/generate', body('hello')),
    streams: (load) =>
      sseStreams(
        { url: `http://127.0.0.1:${port}/api/agents/bench/stream`, body: body(load.message), classify: mastraEvent },
        load,
      ),
  };
}

/** The model stub alone: its chat completions, answered at once; streams straight to it. */
export function stubTarget(pid: number, port: number): Target {
  const body = JSON.stringify({
    model: 'sim-model',
    messages: [
      { role: 'system', content: 'You are a benchmark agent.' },
      { role: 'user', content: 'hello' },
    ],
  });
  return {
    name: 'stub',
    pid,
    port,
    turn: () => rawRequest('POST', '/v1/chat/completions', body, JSON_HEADERS),
    streams: (load) => directStreams(`http://127.0.0.1:${port}/v1`, load),
  };
}

export interface TurnsLoad {
  clients: number;
  durationMs: number;
  round: number;
  simPid: number;
}

/** Instant turns from `clients` keep-alive connections for `durationMs`. */
export async function turnsWindow(target: Target, load: TurnsLoad): Promise<TurnsWindow> {
  const cpu = cpuWindow({ server: target.pid, simulator: load.simPid });
  const http = await httpLoad({
    port: target.port,
    connections: load.clients,
    durationMs: load.durationMs,
    request: (c) => target.turn(load.round, c),
    timeoutMs: 30_000,
  });
  const { wallMs, cpuMs } = cpu();
  const failed = Object.values(http.statuses).reduce((a, b) => a + b, 0);
  return {
    turnsPerSec: http.rps,
    cpuMsPerTurn: round((cpuMs.server ?? 0) / Math.max(1, http.requests), 3),
    p50: http.latency.p50,
    p99: http.latency.p99,
    requests: http.requests,
    errors: http.errors + failed,
    cores: Object.fromEntries(Object.entries(cpuMs).map(([k, v]) => [k, round(v / wallMs, 2)])),
  };
}

/** `load` streamed through `target`, the server's CPU and RSS peak read over the window. */
export async function streamsWindow(
  target: Target,
  load: Omit<StreamLoad, 'pids' | 'rssPid'>,
  simPid: number,
): Promise<StreamsWindow> {
  const pids = target.pid === simPid ? { server: simPid } : { server: target.pid, simulator: simPid };
  const r = await target.streams({ ...load, pids, rssPid: target.pid });
  return {
    ttfcP50: r.ttfc.p50,
    ttfcP99: r.ttfc.p99,
    chunks: r.chunks,
    chunksPerSec: r.chunksPerSec,
    turns: r.turns,
    errors: r.errors,
    cpuUsPerChunk: round(((r.cpuMs.server ?? 0) * 1000) / Math.max(1, r.chunks), 1),
    rssPeakMb: r.rssPeakMb ?? 0,
    cores: r.cores,
  };
}
