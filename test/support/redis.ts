/**
 * A private redis-server for the tests: on a free loopback port, no persistence, stopped after
 * the file. Without redis-server the Redis tests skip with a notice, unless AGENTD_REQUIRE_REDIS=1
 * (CI), where its absence is a failure.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createClient } from 'redis';
import { vi } from 'vitest';
import { freePort, requiredOrSkipped } from './system-program.ts';
import { PATIENT } from './wait.ts';

export function hasRedisServer(): boolean {
  const found = spawnSync('redis-server', ['--version']).status === 0;
  const message = 'redis-server not found; install it with: apt-get install -y redis-server';
  return requiredOrSkipped(found, 'redis', message, 'AGENTD_REQUIRE_REDIS');
}

export interface RedisServer {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts redis-server on `port` (default: a free one). With `dir`, it keeps an append-only file
 * there, fsync'd on every write, so a restart on the same `dir` has every acknowledged write.
 * `args` go on its command line after these (e.g. `--replicaof 127.0.0.1 <port>`).
 */
export async function startRedis(
  port?: number,
  options: { dir?: string; args?: readonly string[] } = {},
): Promise<RedisServer> {
  port ??= await freePort();
  const persistence = options.dir
    ? ['--dir', options.dir, '--appendonly', 'yes', '--appendfsync', 'always']
    : ['--appendonly', 'no'];
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, ...(options.args ?? [])],
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
