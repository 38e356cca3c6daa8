/** Shared setup of the MCP integration tests: real servers, a real bus, the service under test. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { expect } from 'vitest';
import { createBus } from '../../src/bus/index.ts';
import type { AppBus, AppCommands, AppEvents } from '../../src/app.ts';
import { mcpServerConfigSchema, type McpServerConfig } from '../../src/config/schema.ts';
import { createLogger } from '../../src/log/index.ts';
import { createMcpService, type McpService, type McpServiceOptions } from '../../src/tools/index.ts';
import type { ServerRecord } from '../../src/tools/messages.ts';
import { EVERYTHING, fixturePath } from '../support/paths.ts';
import { listeningPorts } from '../support/processes.ts';
import { PATIENT } from '../support/wait.ts';
import { testRunEnv } from '../support/process-ledger.ts';
import type { KeyedCall } from '../support/keyed-app.ts';
import { turnFrames } from '../support/messaging.ts';
import type { WsClient } from '../support/ws-client.ts';

export { EVERYTHING, FILESYSTEM, fixturePath } from '../support/paths.ts';

export const stdio = (args: string[], extra: Record<string, unknown> = {}): McpServerConfig =>
  mcpServerConfigSchema.parse({ type: 'stdio', command: process.execPath, args, timeout: 10_000, ...extra });

export const fixture = (name: string, extra: Record<string, unknown> = {}) => stdio([fixturePath(name)], extra);

export const http = (baseUrl: string, extra: Record<string, unknown> = {}): McpServerConfig =>
  mcpServerConfigSchema.parse({ type: 'http', baseUrl, timeout: 10_000, ...extra });

export interface Harness {
  bus: AppBus;
  service: McpService;
  statuses: ServerRecord[];
  toolsChanged: number[];
  logs: Record<string, unknown>[];
  waitForStatus(serverId: string, status: ServerRecord['status'], timeoutMs?: number): Promise<ServerRecord>;
  stop(): Promise<void>;
}

export function harness(
  mcpServers: Record<string, McpServerConfig>,
  options: Partial<Omit<McpServiceOptions, 'bus' | 'log' | 'config'>> & { toolResultMaxBytes?: number } = {},
): Harness {
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const log = createLogger('debug', sink);
  const bus = createBus<AppCommands, AppEvents>({ log });
  const statuses: ServerRecord[] = [];
  const toolsChanged: number[] = [];
  bus.on('mcp.serverStatus', (e) => void statuses.push(e.payload));
  bus.on('mcp.toolsChanged', (e) => void toolsChanged.push(e.payload.count));
  const { toolResultMaxBytes = 100 * 1024, ...rest } = options;
  const service = createMcpService({ config: { mcpServers, toolResultMaxBytes }, bus, log, ...rest });
  return {
    bus,
    service,
    statuses,
    toolsChanged,
    logs,
    waitForStatus: (serverId, status, timeoutMs = PATIENT.timeout) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          off();
          reject(new Error(`${serverId} did not become ${status} within ${timeoutMs} ms`));
        }, timeoutMs);
        const off = bus.on('mcp.serverStatus', (e) => {
          if (e.payload.id !== serverId || e.payload.status !== status) return;
          clearTimeout(timer);
          off();
          resolve(e.payload);
        });
      }),
    stop: () => service.stop(),
  };
}

/** A port nothing listens on now (for a refusal; a server given it could find it taken meanwhile). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * server-everything over HTTP (`streamableHttp` or `sse`), on a port it takes itself (PORT=0; read off /proc, as it
 * logs only the 0): a port picked here and freed first could be another file's server by the time it binds.
 */
export async function startEverythingHttp(
  mode: 'streamableHttp' | 'sse',
): Promise<{ port: number; child: ChildProcess; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [EVERYTHING, mode], {
    env: { PATH: process.env.PATH ?? '', ...testRunEnv(), PORT: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server-everything ${mode} did not start`)), 30_000); // a loaded machine is slow to start node
    let seen = '';
    child.stderr.on('data', (d: Buffer) => {
      seen += d.toString();
      if (/listening on port|running on port/i.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`server-everything ${mode} exited with ${code}: ${seen}`)));
  });
  const [port, ...more] = listeningPorts(child.pid!);
  if (port === undefined || more.length > 0)
    throw new Error(`server-everything ${mode} listens on [${[port, ...more].join(', ')}]`);
  return {
    port,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

export const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The rejection of a promise (fails if it resolves). */
export async function rejection(
  promise: Promise<unknown>,
): Promise<{ code: string; message: string; details: Record<string, unknown> }> {
  try {
    await promise;
  } catch (e) {
    return e as { code: string; message: string; details: Record<string, unknown> };
  }
  throw new Error('expected a rejection');
}

export const textOf = (data: Record<string, unknown>) =>
  (data.content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('\n');

/**
 * Runs a turn on `ws` whose model calls server-everything's trigger-long-running-operation (3 steps)
 * on `serverId`, and checks what a user depends on: one `toolProgress` frame per step with the turn's
 * and the call's ids, a successful result, and no progress in the session's stored history.
 */
export async function expectLiveProgress(
  ws: WsClient,
  call: KeyedCall,
  sessionId: string,
  serverId: string,
): Promise<void> {
  const from = ws.frames.length;
  ws.send({
    type: 'message',
    sessionId,
    content: `run [[tool:${serverId}--trigger-long-running-operation {"duration":0.6,"steps":3}]]`,
  });
  const frames = await turnFrames(ws, sessionId, from);
  const toolCall = frames.find((f) => f.event === 'toolCall')!;
  const progress = ws.frames.slice(from).filter((f) => f.event === 'toolProgress');
  expect(progress.map((f) => f.data)).toEqual(
    [1, 2, 3].map((n) => ({
      sessionId,
      turnId: toolCall.data.turnId,
      callId: toolCall.data.callId,
      serverId,
      toolName: 'trigger-long-running-operation',
      progress: n,
      total: 3,
    })),
  );
  expect(frames.find((f) => f.event === 'toolResult')?.data.success).toBe(true);
  expect(
    (await call('GET', `/api/sessions/${sessionId}/history`)).body.events.map((e: { event: string }) => e.event),
  ).not.toContain('toolProgress');
}

/** What `progressMessages` needs of an SDK client (v1 or v2), once connected. */
interface ConnectedClient {
  transport?: { onmessage?: ((message: any, extra?: any) => void) | undefined } | undefined;
}

/**
 * The `message` of each progress notification the client's transport delivers from now on, in order.
 * Read where messages arrive, not through `onprogress`: the SDK clients run a notification's handler a
 * microtask later but settle a response at once, so a handler misses the last notifications when they
 * come in the same read as the result (as on a busy machine). Pass `onprogress` still: it asks for them.
 */
export function progressMessages(client: ConnectedClient): string[] {
  const transport = client.transport;
  const deliver = transport?.onmessage;
  if (!transport || !deliver) throw new Error('progressMessages: connect the client first');
  const messages: string[] = [];
  transport.onmessage = (message: { method?: string; params?: { message?: string } }, extra?: unknown) => {
    if (message.method === 'notifications/progress') messages.push(message.params?.message ?? '');
    deliver(message, extra);
  };
  return messages;
}
