/**
 * The cluster of an app on Redis or PostgreSQL (undefined on any other medium; media.ts says what each carries): its
 * session and tool-server commands, the agent's sessions it moves between instances (read through `agent()`: the
 * agent is made after the cluster, since it sends through it), where it finds the turns a dead instance left running
 * when turns resume, and where a watched session's facts are read back (a gap the live medium left).
 */
import { limitsStoreOf, sharedRedisOf, type AgentConfig } from '../config/schema.ts';
import type { Clock, IdSource } from '../clock.ts';
import { lastSeqOf, REPLY_SEED_EVENT, SESSION_COMMANDS, TAKE_OVER_COMMAND, type ReplyTracker } from '../agent/index.ts';
import { createCluster, type ClusterOptions } from '../cluster/index.ts';
import { redisLive, redisMedia, type ClusterMedia } from '../cluster/media.ts';
import { postgresMedium } from '../store/postgres/cluster-listen.ts';
import { postgresLeases, postgresRegistry } from '../store/postgres/cluster-tables.ts';

import type { Logger } from '../log/index.ts';
import type { SharedLimitStore } from '../http/limits.ts';
import type { EventStore, PostgresEventStore, StoreEvent } from '../store/index.ts';
import { TOOL_SERVER_COMMANDS } from '../tools/index.ts';
import type { AppBus } from './types.ts';

interface HeldSessions {
  holds(id: string): boolean;
  drop(id: string, why: 'moved'): unknown;
  release(id: string): Promise<boolean>;
}

export function clusterOf(
  config: AgentConfig,
  deps: {
    instanceId: string;
    log: Logger;
    clock: Clock;
    ids: IdSource;
    bus: AppBus;
    store: Pick<EventStore<StoreEvent>, 'openTurnSessions' | 'read' | 'latest'>;
    replies: Pick<ReplyTracker, 'seedOf'>;
    /** The store identity held, and the store checks (store-loss.ts) a lease's evidence goes to. */
    identity: NonNullable<ClusterOptions['store']>;
  },
  agent: () => HeldSessions,
) {
  const where = mediaOf(config.storage, deps);
  if (!where) return undefined;
  const { store, replies, identity, ...shared } = deps;
  return createCluster({
    ...where,
    ...shared,
    sessionCommands: { scoped: SESSION_COMMANDS, sendMessage: 'agent.sendMessage', takeOver: TAKE_OVER_COMMAND },
    toolServerCommands: TOOL_SERVER_COMMANDS,
    store: identity,
    readFacts: (sessionId, since) => store.read(sessionId, since),
    lastSeq: (sessionId) => lastSeqOf(store, sessionId),
    seedOf: (sessionId) => ({ name: REPLY_SEED_EVENT, payload: replies.seedOf(sessionId) }),
    sessions: {
      holds: (id) => agent().holds(id),
      drop: (id) => void agent().drop(id, 'moved'),
      release: (id) => agent().release(id),
    },
    ...(config.server.resumeTurns && {
      openTurnSessions: () => store.openTurnSessions?.() ?? Promise.resolve([]),
    }),
  });
}

/** The cluster's media and channel prefix by storage; undefined for a storage one process holds. */
function mediaOf(
  storage: AgentConfig['storage'],
  deps: { log: Logger; clock: Clock; store: object },
): { media: ClusterMedia; keyPrefix: string; leaseMs: number } | undefined {
  const { log, clock } = deps;
  if (storage.type === 'redis') {
    const media = redisMedia(storage.url, storage.keyPrefix, { leaseMs: storage.leaseMs, clock, log });
    return { media, keyPrefix: storage.keyPrefix, leaseMs: storage.leaseMs };
  }
  if (storage.type !== 'postgres') return undefined;
  const store = deps.store as PostgresEventStore<StoreEvent>; // createStore made the PostgreSQL engine
  const { url, schema, redis, leaseMs } = storage;
  const control = postgresMedium({ url, schema, log });
  const beside = redis && redisLive(redis.url, log);
  const media: ClusterMedia = {
    live: beside?.live ?? control,
    control,
    leases: postgresLeases(store, control, leaseMs, clock),
    registry: postgresRegistry(control.pool, schema),
    factsByReference: !beside, // a NOTIFY payload is small, the rows are the truth
    ...(beside && { redis: beside.redis }),
  };
  // NOTIFY reaches the whole database, and one Redis may serve several deployments: channels name the schema.
  return { media, keyPrefix: `${redis?.keyPrefix ?? 'agentd:'}${schema}:`, leaseMs: storage.leaseMs };
}

/** Where the rate-limit windows are shared: the cluster's Redis, when the instances share one and the limits use it. */
export function sharedLimitsOf(
  config: AgentConfig,
  cluster: { redis?: SharedLimitStore['client'] | undefined } | undefined,
): SharedLimitStore | undefined {
  const shared = sharedRedisOf(config.storage);
  return cluster?.redis && shared && limitsStoreOf(config) === 'redis'
    ? { client: cluster.redis, keyPrefix: shared.keyPrefix }
    : undefined;
}
