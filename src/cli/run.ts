/** Serves the agent of a valid config in this process (imported only once the config has passed, by serve.ts). */
import cluster from 'node:cluster';
import { channel } from 'node:diagnostics_channel';
import { createApp, type App } from '../app.ts';
import { createRedactor } from '../config/redact.ts';
import { isAppError } from '../errors/index.ts';
import { createLogger, logDestination } from '../log/index.ts';
import { serveStdio } from '../mcp-face/index.ts';
import { VERSION } from '../package-info.ts';
import type { AgentConfig, StorageDirChoice } from '../config/index.ts';
import { APP_CHANNEL, type ServeOptions } from './args.ts';
import { listenAddress, listenFailure, logStorageDir, noKeyHint } from './start-up.ts';
import { refuseOverStdio } from './stdio-refusal.ts';

export async function run(
  options: ServeOptions,
  agentFile: string,
  validConfig: AgentConfig,
  storage?: StorageDirChoice,
): Promise<void> {
  // With MCP on stdio, stdout carries only protocol: logs go to stderr.
  const stdio = options.mcpTransport === 'stdio';
  let config = validConfig;
  if (options.inspect) {
    const relay = options.inspectRelay ?? config.server.inspectRelay;
    config = {
      ...config,
      server: {
        ...config.server,
        inspect: true,
        inspectContent: config.server.inspectContent || options.inspectContent,
        ...(relay && { inspectRelay: relay }),
      },
    };
  }
  const redactor = createRedactor(config);
  const root = createLogger(options.logLevel, await logDestination(options.logFormat, stdio ? 2 : 1), redactor.redact);
  const log = cluster.isWorker ? root.child({ worker: cluster.worker?.id }) : root;
  if (storage) logStorageDir(log, storage);
  const address = listenAddress(options, config);
  const host = address.host;
  // A worker serves the port its supervisor gives it (0 for the first when the port is picked), shared with the rest.
  const port = cluster.isWorker ? Number(process.env.AGENTD_WORKER_PORT) : address.port;

  let app: App;
  try {
    // Over stdio nothing listens: only keys can make the service shared. One supervisor's workers share one service id.
    const serviceId = cluster.isWorker ? process.env.AGENTD_SERVICE_ID : undefined;
    app = createApp(config, {
      log,
      mode: options.mode,
      redactor,
      bindHost: stdio ? '127.0.0.1' : host,
      serviceId,
    });
  } catch (err) {
    // What the config cannot say by itself (a provider without its endpoint or key) is a config error too.
    if (!isAppError(err)) throw err;
    process.stderr.write(
      `agentd: ${agentFile}: ${err.message}\n${err.details.reason === 'missing_api_key' ? noKeyHint() : ''}`,
    );
    process.exit(1);
  }
  try {
    await app.open();
  } catch (err) {
    process.stderr.write(`agentd: ${(err as Error).message}\n`);
    // A desktop client hides stderr: over stdio, the answer to its initialize says why.
    if (stdio) await refuseOverStdio(err, `http://${host}:${address.port}`);
    process.exit(1);
  }
  // For diagnostics tools preloaded with --import (e.g. bench/probe.ts); free when nobody listens.
  channel(APP_CHANNEL).publish(app);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      app.killChildren();
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'shutting down');
    app.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // Whatever way the process ends, no tool server outlives it.
  process.on('exit', () => app.killChildren());
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));

  if (stdio) {
    // The client is answered at once: tool servers connect behind the face, their tools appearing as they do.
    let started = false;
    app.start().then(
      () => (started = true),
      (err: unknown) => {
        log.error({ err }, 'start failed');
        process.exit(1);
      },
    );
    log.info({ version: VERSION, agent: agentFile }, 'agentd serving MCP on stdio');
    await serveStdio(app.serverFace);
    if (started) return shutdown('stdin closed');
    // The client left while tool servers were still starting: nothing to drain; the exit kills their groups.
    log.info('stdin closed during start-up: exiting');
    process.exit(0);
  }
  let bound: number;
  try {
    bound = await app.frontEnd.listen(host, port, { shared: cluster.isWorker });
  } catch (err) {
    // One line that says what to do, and no stack trace: nothing has started.
    const reason = await listenFailure(host, port, err);
    await app.stop();
    process.stderr.write(`agentd: ${reason}\n`);
    process.exit(1);
  }
  log.info({ mode: options.mode, agent: agentFile, version: VERSION }, 'agentd started');
  await app.start();
  log.info('agent ready');
  process.send?.({ type: 'ready', port: bound, engine: app.engine }); // a worker tells its supervisor
}
