/**
 * The process entry: argv → config → app → listen. The only place that listens, reads signals
 * or exits. Exit codes: 0 normal shutdown, 1 start-up failure (bad config, port taken), 2 usage.
 */
import { createApp, type App } from './app.ts';
import { isAppError } from './errors/index.ts';
import { isLoopbackHost } from './http/host-check.ts';
import { channel } from 'node:diagnostics_channel';
import { APP_CHANNEL, parseCliArgs, USAGE, UsageError, type CliOptions } from './cli-args.ts';
import { ConfigError, loadConfig } from './config/index.ts';
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

async function main(): Promise<void> {
  const options = parseOrExit(process.argv.slice(2));
  if (options.help) return void process.stdout.write(USAGE);
  if (options.version) return void process.stdout.write(`${VERSION}\n`);

  // With MCP on stdio, stdout carries only protocol: logs go to stderr.
  const stdio = options.mcpTransport === 'stdio';
  let config;
  try {
    config = await loadConfig(options.agent);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`agentd: ${e.message}\n`);
    process.exit(1);
  }
  if (options.inspect) {
    const relay = options.inspectRelay ?? config.server.inspectRelay;
    config = { ...config, server: { ...config.server, inspect: true, inspectContent: config.server.inspectContent || options.inspectContent, ...(relay && { inspectRelay: relay }) } };
  }
  const redactor = createRedactor(config);
  const log = createLogger(options.logLevel, stdio ? pino.destination(2) : undefined, redactor.redact);
  const host = options.host ?? config.server.host ?? '127.0.0.1';
  const port = options.port ?? config.server.port ?? 3001;
  if (!stdio && !isLoopbackHost(host) && !config.server.auth.apiKey) {
    process.stderr.write(`agentd: refusing to listen on ${host} without server.auth.apiKey in the agent config (the API would be open to the network)\n`);
    process.exit(1);
  }

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
    await app.frontEnd.listen(host, port);
  } catch (err) {
    log.fatal({ err, host, port }, 'cannot listen');
    process.stderr.write(`agentd: ${(err as Error).message}\n`);
    await app.stop();
    process.exit(1);
  }
  log.info({ mode: options.mode, agent: options.agent, version: VERSION }, 'agentd started');
  await app.start();
  log.info('agent ready');
}

main().catch((err: unknown) => {
  process.stderr.write(`agentd: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
