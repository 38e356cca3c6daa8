import type { Clock, IdSource } from '../clock.ts';
import type { Logger } from '../log/index.ts';
import type { RedisConnection } from '../redis/index.ts';

/** What every part of the cluster is built on (createCluster's `shared`; each part takes the fields it needs). */
export interface ClusterShared {
  /** The command connection: publishes and runs scripts (subscriptions have a connection of their own). */
  client: RedisConnection;
  keyPrefix: string;
  instanceId: string;
  /** How long a lease outlives its holder's last renewal. */
  leaseMs: number;
  clock: Clock;
  ids: IdSource;
  log: Logger;
}
