/** Shared pieces of the messaging tests: REST calls, turn frames, what the simulated model saw. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import {
  contentText,
  startSimulator,
  type RecordedRequest,
  type Simulator,
  type SimulatorOptions,
  type WireMessage,
} from '../../tools/simulator/index.ts';
import { EVERYTHING } from './paths.ts';
import { appPool, startApp, type RunningApp } from './start-app.ts';
import { PATIENT } from './wait.ts';
import { connectWs, type Frame, type WsClient } from './ws-client.ts';

/** server-everything over stdio, as an `mcpServers` entry. */
export const everythingStdio = {
  type: 'stdio',
  command: process.execPath,
  args: [EVERYTHING, 'stdio'],
  timeout: 10_000,
};

/** Limits high enough that a test file never trips them. */
export const roomyLimits = { limits: { rest: { points: 10_000 }, ws: { points: 10_000 } } };

export const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

export interface ApiResponse {
  status: number;
  body: any;
  text: string;
  ms: number;
}

/** One REST call; a JSON body when `body` is given. */
export async function api(baseUrl: string, method: string, path: string, body?: unknown): Promise<ApiResponse> {
  const started = Date.now();
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    ...(body !== undefined && { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text, ms: Date.now() - started };
}

export const isEnd = (f: Frame) => f.event === 'response' || f.event === 'error';

/**
 * Waits for the frame that ends the next turn of `sessionId` received after index `from`
 * (a `response`, or an `error` naming the session), and returns that turn's frames in order.
 */
export async function turnFrames(
  ws: WsClient,
  sessionId: string,
  from = ws.frames.length,
  timeoutMs = PATIENT.timeout,
): Promise<Frame[]> {
  const end = await ws.next(
    (f) => isEnd(f) && f.data.sessionId === sessionId && f.data.turnId !== undefined,
    timeoutMs,
    from,
  );
  const turnId = end.data.turnId as string;
  return ws.frames.slice(from).filter((f) => f.data.turnId === turnId);
}

/** Runs one turn over a WebSocket of its own, signed in with `token`, in `sessionId`; its frames. */
export async function turnOver(svc: RunningApp, token: string, sessionId: string, content: string): Promise<Frame[]> {
  const ws = await connectWs(`${svc.wsUrl}?token=${token}`);
  try {
    ws.send({ type: 'message', content, sessionId });
    return await turnFrames(ws, sessionId);
  } finally {
    ws.close();
  }
}

/** Text of a chat message as the model received it (image parts skipped). */
export const textOf = (m: WireMessage | undefined): string => (m ? contentText(m.content) : '');

/** Requests the simulator received whose last user message contains `marker`, oldest first. */
export function requestsWith(sim: Simulator, marker: string): RecordedRequest[] {
  return sim.requests.filter((r) => textOf(r.body.messages.filter((m) => m.role === 'user').at(-1)).includes(marker));
}

/** The messages of the last request whose last user message contains `marker`. */
export function lastMessagesWith(sim: Simulator, marker: string): WireMessage[] {
  const found = requestsWith(sim, marker).at(-1);
  if (!found) throw new Error(`the model never saw a message containing ${JSON.stringify(marker)}`);
  return found.body.messages;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface MessagingService {
  readonly sim: Simulator;
  readonly svc: RunningApp;
  /** A WebSocket client, closed after the file's tests. */
  client: () => Promise<WsClient>;
  post: (path: string, body?: unknown) => Promise<ApiResponse>;
  get: (path: string) => Promise<ApiResponse>;
}

/**
 * A simulator, a temporary data folder and a pool of services for the tests of one file, all gone
 * after them. Read `sim` and `dir` inside tests (they exist from the file's `beforeAll` on).
 */
export function useSimulatorAndFolder(prefix: string, simulator: SimulatorOptions = {}) {
  let sim: Simulator | undefined;
  let dir: string | undefined;
  const apps = appPool();
  beforeAll(async () => {
    sim = await startSimulator(simulator);
    dir = await mkdtemp(join(tmpdir(), prefix));
  });
  afterAll(async () => {
    await apps.stopAll();
    await sim?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return {
    apps,
    get sim() {
      return sim ?? expect.unreachable('simulator not started');
    },
    get dir() {
      return dir ?? expect.unreachable('data folder not made');
    },
  };
}

/**
 * Registers beforeAll/afterAll for a test file: the simulator, and the real service with
 * server-everything over stdio, roomy limits and a 10 s model timeout, plus `doc` on top.
 */
export function useMessagingService(doc: Record<string, unknown> = {}): MessagingService {
  let sim: Simulator | undefined;
  let svc: RunningApp | undefined;
  const clients: WsClient[] = [];
  beforeAll(async () => {
    sim = await startSimulator();
    svc = await startApp(
      { mcpServers: { everything: everythingStdio }, server: roomyLimits, llm: { timeoutMs: 10_000 }, ...doc },
      { modelUrl: sim.url },
    );
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await svc?.stop();
    await sim?.close();
  });
  const running = () => svc ?? expect.unreachable('service not started');
  return {
    get sim() {
      return sim ?? expect.unreachable('simulator not started');
    },
    get svc() {
      return running();
    },
    client: async () => {
      const c = await connectWs(running().wsUrl);
      clients.push(c);
      return c;
    },
    post: (path, body) => api(running().url, 'POST', path, body),
    get: (path) => api(running().url, 'GET', path),
  };
}
