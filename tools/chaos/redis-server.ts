/**
 * The chaos run's private redis-server: on a free loopback port, with an append-only file fsync'd on every write in
 * the run's folder (as test/support/redis.ts does with `dir`), so a restart on the same port and folder has every
 * acknowledged write. `crash()` kills it (SIGKILL) and `start()` brings it back on the same port and folder.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createClient } from 'redis';
import { signalGroup, trackChild } from './cleanup.ts';
import { until } from './wait.ts';

export interface ChaosRedis {
  url: string;
  start(): Promise<void>;
  crash(): Promise<void>;
  isUp(): boolean;
}

export function chaosRedis(port: number, dir: string): ChaosRedis {
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
