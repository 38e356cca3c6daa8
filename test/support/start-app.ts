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
export async function startApp(doc: Record<string, unknown> = {}, opts: { modelUrl?: string; deps?: Partial<AppDeps> } = {}): Promise<RunningApp> {
  const { llm, ...rest } = doc as { llm?: Record<string, unknown> };
  const config = parseConfig({
    storage: { type: 'memory' },
    ...rest,
    llm: { provider: 'openai-compatible', baseURL: opts.modelUrl ?? 'http://127.0.0.1:9/v1', model: 'sim-model', apiKey: 'test-key', maxRetries: 0, ...llm },
  });
  const log = pino({ level: process.env.AGENTD_TEST_LOG ?? 'silent' });
  const app = createApp(config, { log, ...opts.deps });
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
