/**
 * A private redis-server for the tests: on a free loopback port, no persistence, stopped after
 * the file. Without redis-server the Redis tests skip with a notice, unless AGENTD_REQUIRE_REDIS=1
 * (CI), where its absence is a failure.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { createClient } from 'redis';
import { vi } from 'vitest';
import { PATIENT } from './wait.ts';

export function hasRedisServer(): boolean {
  const found = spawnSync('redis-server', ['--version']).status === 0;
  if (found) return true;
  const message = 'redis-server not found; install it with: apt-get install -y redis-server';
  if (process.env.AGENTD_REQUIRE_REDIS === '1') throw new Error(`${message} (AGENTD_REQUIRE_REDIS=1)`);
  console.warn(`\n[redis tests skipped] ${message}\n`);
  return false;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });

export interface RedisServer {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts redis-server on `port` (default: a free one). With `dir`, it keeps an append-only file
 * there, fsync'd on every write, so a restart on the same `dir` has every acknowledged write.
 */
export async function startRedis(port?: number, options: { dir?: string } = {}): Promise<RedisServer> {
  port ??= await freePort();
  const persistence = options.dir
    ? ['--dir', options.dir, '--appendonly', 'yes', '--appendfsync', 'always']
    : ['--appendonly', 'no'];
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) => child.once('exit', (code) => ((exitCode = code), resolve())));
  // Answers a PING once it has started (a loaded machine can take seconds).
  await vi
    .waitFor(async () => {
      if (exitCode !== undefined) throw new Error(`redis-server on ${url} exited with ${exitCode}`);
      const probe = createClient({ url, socket: { reconnectStrategy: false } });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        await probe.ping();
      } finally {
        probe.destroy();
      }
    }, PATIENT)
    .catch((err: unknown) => {
      child.kill('SIGKILL');
      throw new Error(`redis-server did not start on ${url}: ${err instanceof Error ? err.message : String(err)}`);
    });
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** How many connections subscribe to a Redis channel (PUBSUB NUMSUB). */
export async function channelSubscribers(url: string, channel: string): Promise<number> {
  const probe = createClient({ url });
  await probe.connect();
  try {
    return (await probe.pubSubNumSub(channel))[channel] ?? 0;
  } finally {
    await probe.close();
  }
}
