import { pino, type Logger } from 'pino';
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
  const { app, config, warnings } = buildApp(doc, opts);
  return listenApp(app, config, warnings);
}

/** Starts the real service with a config as an agent file gives it (`loadConfig`), on a free loopback port. */
export function startLoadedApp(config: AgentConfig, deps: Partial<AppDeps> = {}): Promise<RunningApp> {
  const { log, warnings } = testLog();
  return listenApp(createApp(config, { log, ...deps }), config, warnings);
}

async function listenApp(app: App, config: AgentConfig, warnings: string[]): Promise<RunningApp> {
  await app.open();
  const port = await app.frontEnd.listen('127.0.0.1', 0);
  await app.start();
  return {
    app,
    config,
    port,
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}/`,
    stop: () => stopWithin(app, warnings),
  };
}

export interface AppOptions {
  modelUrl?: string;
  deps?: Partial<AppDeps>;
}

function buildApp(
  doc: Record<string, unknown>,
  opts: AppOptions,
): { app: App; config: AgentConfig; warnings: string[] } {
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
  const { log, warnings } = testLog();
  return { app: createApp(config, { log, ...opts.deps }), config, warnings };
}

/**
 * The service's log: at the level AGENTD_TEST_LOG names, on stdout; without it, its last warnings and errors are
 * kept (in `warnings`) to tell why a stop hangs.
 */
function testLog(): { log: Logger; warnings: string[] } {
  const warnings: string[] = [];
  const level = process.env.AGENTD_TEST_LOG;
  if (level) return { log: pino({ level }), warnings };
  const keep = (line: string) => {
    warnings.push(line.trim());
    if (warnings.length > KEPT_WARNINGS) warnings.shift();
  };
  return { log: pino({ level: 'warn' }, { write: keep }), warnings };
}
const KEPT_WARNINGS = 20;

/** Far longer than a stop takes (its slow steps are named after 5 s), shorter than a hook's time limit. */
const STOP_DEADLINE_MS = 60_000;

/** Stops the service; one still stopping at the deadline fails with its last warnings, which name the step it waits on. */
async function stopWithin(app: App, warnings: string[]): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the service was still stopping after ${STOP_DEADLINE_MS} ms:\n${warnings.join('\n')}`)),
      STOP_DEADLINE_MS,
    );
  });
  try {
    await Promise.race([app.stop(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

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
  const { app, config, warnings } = buildApp(doc, opts);
  await app.open();
  await app.start();
  return {
    app,
    config,
    request: (path, init) => app.frontEnd.inject(new Request(new URL(path, 'http://127.0.0.1'), init)),
    stop: () => stopWithin(app, warnings),
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
