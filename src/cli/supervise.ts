/**
 * `--workers N`: forks N workers serving one port and sharing sessions through Redis. A worker that dies after it
 * was ready is restarted; one that fails before makes the supervisor exit 1. SIGTERM/SIGINT drain all, then exit 0.
 */
import cluster, { type Worker } from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { createRedactor } from '../config/redact.ts';
import { createLogger, logDestination } from '../log/index.ts';
import { VERSION } from '../package-info.ts';
import type { ServeOptions } from './args.ts';
import { ensureBindableOrExit, listenAddress, loadConfigOrExit } from './start-up.ts';

/** What a worker sends once it serves: the port it bound and its engine's name. */
interface ReadyMessage {
  type?: string;
  port?: number;
  engine?: string;
}

/**
 * The port to give the workers forked after the first, which bound `requested`. `node:cluster` keeps one listening
 * handle per requested port, so on `node:http` every worker asking for 0 gets the first one's port; uWebSockets.js
 * binds in each worker (`SO_REUSEPORT`), so there the others must ask for the number.
 */
export function portForOthers(requested: number, first: ReadyMessage): number {
  return requested === 0 && first.engine === 'uws' && first.port ? first.port : requested;
}

export async function supervise(options: ServeOptions, agentFile: string): Promise<void> {
  const { config } = await loadConfigOrExit(agentFile);
  if (config.storage.type !== 'redis' && config.storage.type !== 'postgres') {
    process.stderr.write(
      `agentd: --workers needs storage.type redis or postgres in ${agentFile}: the workers share sessions and streams through it\n`,
    );
    process.exit(1);
  }
  const destination = await logDestination(options.logFormat, 1);
  const log = createLogger(options.logLevel, destination, createRedactor(config).redact).child({ supervisor: true });
  const address = listenAddress(options, config);
  // A port in use is said once, here, rather than by every worker.
  await ensureBindableOrExit(address.host, address.port);
  // With port 0 the first worker picks the port, and the others start once it serves (no probe to race with).
  let port = address.port;
  let announced = false;
  const announce = (bound: number): void => {
    announced = true;
    log.info(
      { workers: options.workers, host: address.host, port: bound, version: VERSION },
      `agentd supervising ${options.workers} workers on http://${address.host}:${bound}`,
    );
  };
  let stopping = false;
  const live = new Set<Worker>();

  // One id for the whole service, whichever worker answers its /mcp.
  const serviceId = randomUUID();
  const fork = (): void => {
    const worker = cluster.fork({ AGENTD_WORKER_PORT: String(port), AGENTD_SERVICE_ID: serviceId });
    live.add(worker);
    let ready = false;
    worker.on('message', (m: ReadyMessage) => {
      if (m.type !== 'ready' || ready) return;
      ready = true;
      if (announced || stopping) return;
      port = portForOthers(port, m);
      announce(m.port ?? port);
      for (let i = 1; i < options.workers; i++) fork();
    });
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
  if (port === 0) return fork();
  for (let i = 0; i < options.workers; i++) fork();
  announce(port);
}
