/**
 * A running agentd seen through bearer keys, as the MCP feature tests use it: REST calls as a key,
 * the shorthand keys (`server.auth.apiKey`, a chat key; `adminKey`), and a WebSocket connection for
 * each of them.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import type { AppDeps } from '../../src/app.ts';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { startApp, type RunningApp } from './start-app.ts';
import { until } from './wait.ts';
import { connectWs, type WsClient } from './ws-client.ts';

const CHAT_KEY = 'chat-key-0123456789abcdef';
/** Named keys of two chat principals and an admin (`server.auth.keys`). */
export const ALICE = 'alice-key-0123456789abcdef';
export const BOB = 'bob-key-0123456789abcdefgh';
export const ROOT = 'root-key-0123456789abcdefg';
export const namedKeys = [
  { name: 'alice', key: ALICE, scopes: ['chat'] },
  { name: 'bob', key: BOB, scopes: ['chat'] },
  { name: 'root', key: ROOT, scopes: ['admin'] },
];
export const ADMIN_KEY = 'admin-key-0123456789abcdef';
/** `server.auth` with the shorthand keys. */
export const shorthandKeys = { apiKey: CHAT_KEY, adminKey: ADMIN_KEY };

interface KeyedResponse {
  status: number;
  body: Record<string, any>;
  headers: Headers;
}

/** A REST call as one key. */
export type KeyedCall = (method: string, path: string, body?: unknown) => Promise<KeyedResponse>;

/** One REST call as `key` (a JSON body when given); `app` is read at each call, so it may start in a beforeAll. */
export async function callAs(
  app: () => RunningApp,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<KeyedResponse> {
  const res = await fetch(`${app().url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body !== undefined && { 'Content-Type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any>, headers: res.headers };
}

/** REST callers as the chat key and as the admin key. */
function shorthandCallers(app: () => RunningApp): { asChat: KeyedCall; asAdmin: KeyedCall } {
  return {
    asChat: (method: string, path: string, body?: unknown) => callAs(app, CHAT_KEY, method, path, body),
    asAdmin: (method: string, path: string, body?: unknown) => callAs(app, ADMIN_KEY, method, path, body),
  };
}

/** A WebSocket connection as the chat key and one as the admin key. */
async function connectShorthand(app: RunningApp): Promise<{ chat: WsClient; admin: WsClient }> {
  return {
    chat: await connectWs(`${app.wsUrl}?token=${CHAT_KEY}`),
    admin: await connectWs(`${app.wsUrl}?token=${ADMIN_KEY}`),
  };
}

/** Waits until every tool server of `app` is connected (a slow machine may retry one first), asking as `key`. */
export async function untilServersConnected(
  app: () => RunningApp,
  what: string,
  { key = CHAT_KEY, ...options }: { key?: string; timeout?: number } = {},
): Promise<void> {
  let seen: { status: string }[] = [];
  const connected = async () => {
    seen = (await callAs(app, key, 'GET', '/api/mcp/servers')).body.servers;
    return seen.every((s) => s.status === 'connected');
  };
  await until(connected, () => `${what} (last seen: ${JSON.stringify(seen)})`, options);
}

/**
 * One agentd for a suite, seen through the shorthand keys: the simulator as its model, agentd started
 * with `config()` (made once the earlier hooks ran; it sets `server.auth` to `shorthandKeys`), every
 * tool server connected, and a WebSocket connection per key; all of it stopped after the suite.
 */
export function useShorthandApp(
  config: () => Record<string, unknown>,
  options: { deps?: Partial<AppDeps>; connectTimeout?: number } = {},
) {
  let sim: Simulator | undefined;
  let svc: RunningApp | undefined;
  let sockets: { chat: WsClient; admin: WsClient } | undefined;
  const app = () => svc ?? expect.unreachable('agentd not started');
  beforeAll(async () => {
    sim = await startSimulator();
    svc = await startApp(config(), { modelUrl: sim.url, ...(options.deps && { deps: options.deps }) });
    await untilServersConnected(
      app,
      'every tool server connected',
      options.connectTimeout === undefined ? {} : { timeout: options.connectTimeout },
    );
    sockets = await connectShorthand(svc);
  });
  afterAll(async () => {
    sockets?.chat.close();
    sockets?.admin.close();
    await svc?.stop();
    await sim?.close();
  });
  return {
    ...shorthandCallers(app),
    get svc() {
      return app();
    },
    get sim() {
      return sim ?? expect.unreachable('simulator not started');
    },
    get chat() {
      return sockets?.chat ?? expect.unreachable('not connected');
    },
    get admin() {
      return sockets?.admin ?? expect.unreachable('not connected');
    },
  };
}
