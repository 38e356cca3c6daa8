/**
 * What a cluster runs on, by storage:
 * - `redisMedia`: everything on one Redis (pub/sub, lease keys, tool-server hashes), as since the cluster began.
 * - On PostgreSQL (composed in src/app/cluster.ts from src/store/postgres/cluster-*.ts): everything on the database of
 *   record (LISTEN/NOTIFY, the session rows' leases, tables for the tool servers), so two instances on one database
 *   form a cluster with nothing else; stored facts then travel as their seq and are read from the store. With a Redis
 *   beside it (`redisMedium` as `live`), Redis carries the live frames only (its pub/sub counts listeners, so an
 *   unwatched session costs nothing); leases, forwarding and records stay in PostgreSQL.
 */
import type { Clock } from '../clock.ts';
import type { Logger } from '../log/index.ts';
import { createRedisConnection, type RedisConnection } from '../redis/index.ts';
import type { ClusterMedium, ClusterRegistry, LeaseBackend } from './medium.ts';
import { redisLeases, redisMedium, redisRegistry } from './redis-medium.ts';

export interface ClusterMedia {
  /** The live frames and watch notices (fan-out.ts). */
  live: ClusterMedium;
  /** Forwarded commands and their replies, tool-server changes. */
  control: ClusterMedium;
  leases: LeaseBackend;
  registry: ClusterRegistry;
  /** Stored facts travel as their seq alone (fan-out.ts). */
  factsByReference: boolean;
  /** The Redis command connection, when the cluster has one. */
  redis?: RedisConnection;
}

interface MediaDeps {
  leaseMs: number;
  clock: Clock;
  log: Logger;
}

export function redisMedia(url: string, keyPrefix: string, deps: MediaDeps): ClusterMedia {
  const client = createRedisConnection(url, 'cluster', deps.log);
  const medium = redisMedium(client, client.duplicate());
  return {
    live: medium,
    control: medium,
    leases: redisLeases(client, keyPrefix, deps.leaseMs, deps.clock),
    registry: redisRegistry(client, keyPrefix, deps.clock),
    factsByReference: false,
    redis: client,
  };
}

/** A Redis that carries the live frames only (beside PostgreSQL), and its command connection. */
export function redisLive(url: string, log: Logger): { live: ClusterMedium; redis: RedisConnection } {
  const redis = createRedisConnection(url, 'cluster', log);
  return { live: redisMedium(redis, redis.duplicate()), redis };
}
