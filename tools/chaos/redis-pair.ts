/**
 * The chaos run's Redis with a replica (`--lossy` or `--replicas N`): two redis-servers (redis-server.ts), one the
 * primary, the other its replica (`--replicaof`), the replica's link through a TCP proxy (`repl`), and the instances'
 * connections through another (`url` is that proxy's), so a failover moves them. Beside `crash` and `start` (the
 * primary, as `redisRestart` does to the single server) it has the two faults that lose acknowledged writes:
 * - `wipe()`: the primary restarted without its data (killed, its files removed, started again on the same port); its
 *   replica follows it (a full resynchronisation from the empty primary);
 * - `failover(lagMs)`: the replica made to lag (its link frozen for `lagMs`: the primary goes on acknowledging
 *   writes it never sees, and a `WAIT` for it times out), then promoted (`REPLICAOF NO ONE`) and the instances moved
 *   to it; the old primary comes back, empty, as the new primary's replica.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createClient } from 'redis';
import { onCleanup } from './cleanup.ts';
import { chaosRedis, type ChaosRedis, type ChaosRedisNode } from './redis-server.ts';
import { startTcpProxy } from './tcp-proxy.ts';
import { freePort, sleep, until } from './wait.ts';

export interface RedisPair extends ChaosRedis {
  wipe(downMs: number): Promise<void>;
  /** `lost` is called as the replica is promoted: what the primary acknowledged since the freeze is gone then. */
  failover(lagMs: number, lost: () => void): Promise<void>;
}

/** Sends one command to the server on `port` directly (not through a proxy). */
async function command(port: number, args: string[]): Promise<string> {
  const client = createClient({ url: `redis://127.0.0.1:${port}`, socket: { reconnectStrategy: false } });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const reply: unknown = await client.sendCommand(args);
    return typeof reply === 'string' ? reply : JSON.stringify(reply);
  } finally {
    client.destroy();
  }
}

export async function redisPair(dir: string): Promise<RedisPair> {
  const [portA, portB] = [await freePort(), await freePort()];
  const repl = await startTcpProxy(portA);
  const front = await startTcpProxy(portA);
  onCleanup(() => Promise.all([repl.close(), front.close()]).then(() => undefined));
  const replicaArgs = () => ['--replicaof', '127.0.0.1', String(repl.port)];
  const node = (name: string, port: number): ChaosRedisNode => {
    const at = join(dir, name);
    mkdirSync(at, { recursive: true });
    return chaosRedis(port, at, () => (roles.replica.port === port ? replicaArgs() : []));
  };
  const roles: { primary: ChaosRedisNode; replica: ChaosRedisNode } = {
    primary: node('a', portA),
    replica: node('b', portB),
  };
  /** The replica holds the primary's data set and follows it. */
  const inSync = () =>
    until(
      async () => /master_link_status:up/.test(await command(roles.replica.port, ['INFO', 'replication'])),
      'the replica in sync with the primary',
      30_000,
    );
  await roles.primary.start();
  await roles.replica.start();
  await inSync();
  return {
    url: `redis://127.0.0.1:${front.port}`,
    isUp: () => roles.primary.isUp(),
    start: () => roles.primary.start(),
    crash: () => roles.primary.crash(),
    async wipe(downMs) {
      await roles.primary.crash();
      roles.primary.wipe();
      await sleep(downMs);
      await roles.primary.start();
    },
    async failover(lagMs, lost) {
      repl.freeze();
      await sleep(lagMs);
      const [old, promoted] = [roles.primary, roles.replica];
      lost();
      await command(promoted.port, ['REPLICAOF', 'NO', 'ONE']);
      front.point(promoted.port);
      await old.crash();
      old.wipe();
      roles.primary = promoted;
      roles.replica = old;
      repl.point(promoted.port);
      await old.start();
      await inSync();
    },
  };
}
