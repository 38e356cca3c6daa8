/**
 * The process entry: argv → config → app → listen. The only place that listens, reads signals,
 * forks workers or exits. Exit codes: 0 normal shutdown, 1 start-up failure (bad config, port
 * taken, Redis unreachable), 2 usage.
 *
 * With `--workers N` (N > 1) this process supervises: it forks N workers that each run the whole
 * service on one shared port (the kernel spreads connections, SO_REUSEPORT) and share sessions
 * through the Redis store; it restarts a worker that dies after it was ready, exits 1 when one
 * fails before (its own stderr says why), and on SIGTERM/SIGINT drains them all, then exits 0.
 */
import cluster, { type Worker } from 'node:cluster';
import { createServer } from 'node:net';
import { createApp, type App } from './app.ts';
import { isAppError } from './errors/index.ts';
import { isLoopbackHost } from './http/host-check.ts';
import { channel } from 'node:diagnostics_channel';
import { APP_CHANNEL, parseCliArgs, USAGE, UsageError, type CliOptions } from './cli-args.ts';
import { ConfigError, loadConfig, type AgentConfig } from './config/index.ts';
import { createRedactor } from './config/redact.ts';
import { createLogger } from './log/index.ts';
import { serveStdio } from './mcp/server/index.ts';
import { pino } from 'pino';
import { VERSION } from './version.ts';

function parseOrExit(argv: string[]): CliOptions {
  try {
    return parseCliArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`agentd: ${e.message}\n\n${USAGE}`);
    process.exit(2);
  }
}

async function loadConfigOrExit(file: string): Promise<AgentConfig> {
  try {
    return await loadConfig(file);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`agentd: ${e.message}\n`);
    process.exit(1);
  }
}

/** Where to listen: flags over config over defaults; exits 1 rather than expose an open API to the network. */
function listenAddress(options: CliOptions, config: AgentConfig): { host: string; port: number } {
  const host = options.host ?? config.server.host ?? '127.0.0.1';
  const port = options.port ?? config.server.port ?? 3001;
  if (options.mcpTransport !== 'stdio' && !isLoopbackHost(host) && !config.server.auth.apiKey) {
    process.stderr.write(`agentd: refusing to listen on ${host} without server.auth.apiKey in the agent config (the API would be open to the network)\n`);
    process.exit(1);
  }
  return { host, port };
}

async function main(): Promise<void> {
  const options = parseOrExit(process.argv.slice(2));
  if (options.help) return void process.stdout.write(USAGE);
  if (options.version) return void process.stdout.write(`${VERSION}\n`);
  if (options.workers > 1 && cluster.isPrimary) return supervise(options);

  // With MCP on stdio, stdout carries only protocol: logs go to stderr.
  const stdio = options.mcpTransport === 'stdio';
  let config = await loadConfigOrExit(options.agent);
  if (options.inspect) {
    const relay = options.inspectRelay ?? config.server.inspectRelay;
    config = { ...config, server: { ...config.server, inspect: true, inspectContent: config.server.inspectContent || options.inspectContent, ...(relay && { inspectRelay: relay }) } };
  }
  const redactor = createRedactor(config);
  const root = createLogger(options.logLevel, stdio ? pino.destination(2) : undefined, redactor.redact);
  const log = cluster.isWorker ? root.child({ worker: cluster.worker?.id }) : root;
  const address = listenAddress(options, config);
  const host = address.host;
  // A worker serves the port its supervisor chose, shared with the other workers.
  const port = cluster.isWorker ? Number(process.env.AGENTD_WORKER_PORT) : address.port;

  let app: App;
  try {
    app = createApp(config, { log, mode: options.mode, redactor });
  } catch (err) {
    // What the config cannot say by itself (a provider without its endpoint or key) is a config error too.
    if (!isAppError(err)) throw err;
    process.stderr.write(`agentd: ${options.agent}: ${err.message}\n`);
    process.exit(1);
  }
  try {
    await app.open();
  } catch (err) {
    process.stderr.write(`agentd: ${(err as Error).message}\n`);
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
    await app.start();
    log.info({ version: VERSION, agent: options.agent }, 'agentd serving MCP on stdio');
    await serveStdio(app.serverFace);
    return shutdown('stdin closed');
  }
  try {
    await app.frontEnd.listen(host, port, { shared: cluster.isWorker });
  } catch (err) {
    log.fatal({ err, host, port }, 'cannot listen');
    process.stderr.write(`agentd: ${(err as Error).message}\n`);
    await app.stop();
    process.exit(1);
  }
  log.info({ mode: options.mode, agent: options.agent, version: VERSION }, 'agentd started');
  await app.start();
  log.info('agent ready');
  process.send?.({ type: 'ready' }); // a worker tells its supervisor
}

/** A free port on `host`, for workers asked to serve port 0 (they must all bind the same one). */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, host, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
    probe.once('error', reject);
  });
}

/** `--workers N`: forks and watches the workers (see the file's comment). */
async function supervise(options: CliOptions): Promise<void> {
  const config = await loadConfigOrExit(options.agent);
  if (config.storage.type !== 'redis') {
    process.stderr.write(`agentd: --workers needs storage.type redis in ${options.agent}: the workers share sessions, streams and limits through it\n`);
    process.exit(1);
  }
  const log = createLogger(options.logLevel, undefined, createRedactor(config).redact).child({ supervisor: true });
  const address = listenAddress(options, config);
  const port = address.port === 0 ? await freePort(address.host) : address.port;
  let stopping = false;
  const live = new Set<Worker>();

  const fork = (): void => {
    const worker = cluster.fork({ AGENTD_WORKER_PORT: String(port) });
    live.add(worker);
    let ready = false;
    worker.on('message', (m: { type?: string }) => (ready ||= m.type === 'ready'));
    worker.on('exit', (code, signal) => {
      live.delete(worker);
      if (stopping) {
        if (live.size === 0) process.exit();
        return;
      }
      if (!ready) {
        log.fatal({ worker: worker.id, code, signal }, 'a worker failed to start; stopping');
        process.exitCode = 1;
        stopAll();
        if (live.size === 0) process.exit();
        return;
      }
      log.warn({ worker: worker.id, code, signal }, 'a worker died; starting another');
      setTimeout(fork, 500).unref();
    });
  };
  const stopAll = (): void => {
    stopping = true;
    for (const worker of live) worker.process.kill('SIGTERM');
  };
  const shutdown = (signal: string) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: killing the workers');
      for (const worker of live) worker.process.kill('SIGKILL');
      process.exit(1);
    }
    log.info({ signal }, 'draining the workers');
    stopAll();
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  for (let i = 0; i < options.workers; i++) fork();
  log.info({ workers: options.workers, host: address.host, port, version: VERSION }, `agentd supervising ${options.workers} workers on http://${address.host}:${port}`);
}

main().catch((err: unknown) => {
  process.stderr.write(`agentd: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
