import type { Clock, IdSource } from '../clock.ts';
import type { Logger } from '../log/index.ts';
import type { ClusterMedium } from './medium.ts';

/** What every part of the cluster is built on (createCluster's `shared`; each part takes the fields it needs). */
export interface ClusterShared {
  /** What instances send each other through: inboxes, watch notices, tool-server changes (medium.ts). */
  medium: ClusterMedium;
  /** Prefix of every channel name, so deployments can share one medium. */
  keyPrefix: string;
  instanceId: string;
  /** How long a lease outlives its holder's last renewal. */
  leaseMs: number;
  clock: Clock;
  ids: IdSource;
  log: Logger;
}
