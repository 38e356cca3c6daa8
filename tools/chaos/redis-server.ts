/**
 * The chaos run's private redis-server: on a free loopback port, with an append-only file fsync'd on every write in
 * the run's folder (as test/support/redis.ts does with `dir`), so a restart on the same port and folder has every
 * acknowledged write. `crash()` kills it (SIGKILL) and `start()` brings it back on the same port and folder, with
 * `args()` (asked at each start: a replica's `--replicaof`) after its own; `wipe()` removes what it kept on disk (it
 * must be down), so its next start is empty.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { createClient } from 'redis';
import { signalGroup, trackChild } from './cleanup.ts';
import { until } from './wait.ts';

export interface ChaosRedis {
  url: string;
  start(): Promise<void>;
  crash(): Promise<void>;
  isUp(): boolean;
}

export interface ChaosRedisNode extends ChaosRedis {
  port: number;
  wipe(): void;
}

export function chaosRedis(port: number, dir: string, args: () => string[] = () => []): ChaosRedisNode {
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const ping = async (): Promise<boolean> => {
    const probe = createClient({ url, socket: { reconnectStrategy: false, connectTimeout: 1000 } });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      return (await probe.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      probe.destroy();
    }
  };
  return {
    url,
    port,
    wipe() {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
    },
    isUp: () => child !== undefined,
    async start() {
      child = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir].concat([
          '--appendonly',
          'yes',
          '--appendfsync',
          'always',
          '--maxmemory-policy',
          'noeviction',
          ...args(),
        ]),
        { stdio: 'ignore', detached: true },
      );
      trackChild(child);
      const started = child;
      exited = new Promise((resolve) => started.once('exit', () => resolve()));
      await until(ping, `redis-server answering on ${url}`, 30_000);
    },
    async crash() {
      if (!child) return;
      signalGroup(child, 'SIGKILL');
      child = undefined;
      await exited;
    },
  };
}
