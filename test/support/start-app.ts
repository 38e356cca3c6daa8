import { pino } from 'pino';
import { createApp, type App, type AppDeps } from '../../src/app.ts';
import { parseConfig, type AgentConfig } from '../../src/config/index.ts';

export interface RunningApp {
  app: App;
  config: AgentConfig;
  port: number;
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** `ws://127.0.0.1:<port>/` */
  wsUrl: string;
  stop(): Promise<void>;
}

/**
 * Starts the real service on a free loopback port with a config built from `doc` (the YAML
 * document as an object). Defaults: in-memory store, an OpenAI-compatible model at `modelUrl`
 * (the simulator), no tool servers. Logs are silent unless AGENTD_TEST_LOG is set.
 */
export function startApp(doc: Record<string, unknown> = {}, opts: AppOptions = {}): Promise<RunningApp> {
  const { app, config } = buildApp(doc, opts);
  return listenApp(app, config);
}

/** Starts the real service with a config as an agent file gives it (`loadConfig`), on a free loopback port. */
export function startLoadedApp(config: AgentConfig, deps: Partial<AppDeps> = {}): Promise<RunningApp> {
  return listenApp(createApp(config, { log: silentLog(), ...deps }), config);
}

async function listenApp(app: App, config: AgentConfig): Promise<RunningApp> {
  await app.open();
  const port = await app.frontEnd.listen('127.0.0.1', 0);
  await app.start();
  return {
    app,
    config,
    port,
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}/`,
    stop: () => app.stop(),
  };
}

export interface AppOptions {
  modelUrl?: string;
  deps?: Partial<AppDeps>;
}

function buildApp(doc: Record<string, unknown>, opts: AppOptions): { app: App; config: AgentConfig } {
  const { llm, ...rest } = doc as { llm?: Record<string, unknown> };
  const config = parseConfig({
    storage: { type: 'memory' },
    ...rest,
    llm: {
      provider: 'openai-compatible',
      baseURL: opts.modelUrl ?? 'http://127.0.0.1:9/v1',
      model: 'sim-model',
      apiKey: 'test-key',
      maxRetries: 0,
      ...llm,
    },
  });
  return { app: createApp(config, { log: silentLog(), ...opts.deps }), config };
}

/** The service's log: silent unless AGENTD_TEST_LOG names a level. */
const silentLog = () => pino({ level: process.env.AGENTD_TEST_LOG ?? 'silent' });

export interface InProcessApp {
  app: App;
  config: AgentConfig;
  /** A request answered in process (`app.frontEnd.inject`): `fetch`'s signature, with a path for the URL. */
  request: (path: string, init?: RequestInit) => Promise<Response>;
  stop(): Promise<void>;
}

/**
 * The real service as `startApp` builds it, started but never listening: requests are answered in
 * process, without a socket. For tests of routes, admission, the error table and the OpenAPI
 * document; what needs a socket (WebSocket, limits per connection, engines) uses `startApp`.
 */
export async function injectApp(doc: Record<string, unknown> = {}, opts: AppOptions = {}): Promise<InProcessApp> {
  const { app, config } = buildApp(doc, opts);
  await app.open();
  await app.start();
  return {
    app,
    config,
    request: (path, init) => app.frontEnd.inject(new Request(new URL(path, 'http://127.0.0.1'), init)),
    stop: () => app.stop(),
  };
}

/** The services a test file starts: `stopAll` (in afterAll) stops those still running; `stop` ends one early. */
export function appPool() {
  const running = new Set<RunningApp>();
  return {
    async start(...args: Parameters<typeof startApp>): Promise<RunningApp> {
      const app = await startApp(...args);
      running.add(app);
      return app;
    },
    async stop(app: RunningApp): Promise<void> {
      running.delete(app);
      await app.stop();
    },
    async stopAll(): Promise<void> {
      for (const app of running) await app.stop();
      running.clear();
    },
  };
}

/** The service's open WebSocket connections, as `GET /metrics` tells. */
export async function openWebSockets(svc: RunningApp): Promise<number> {
  const metrics = await (await fetch(`${svc.url}/metrics`)).text();
  return Number(/^agentd_websocket_connections (\S+)$/m.exec(metrics)?.[1]);
}
