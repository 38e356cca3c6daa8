/**
 * The cluster of an app on Redis (undefined on any other medium): its session and tool-server commands, the agent's
 * sessions it moves between instances (read through `agent()`, made after it), and where it finds the turns a dead
 * instance left running when turns resume, and where a watched session's facts are read back (a gap pub/sub left).
 */
import type { AgentConfig } from '../config/schema.ts';
import type { Clock, IdSource } from '../clock.ts';
import { lastSeqOf, REPLY_SEED_EVENT, SESSION_COMMANDS, TAKE_OVER_COMMAND, type ReplyTracker } from '../agent/index.ts';
import { createCluster, type ClusterOptions } from '../cluster/index.ts';

import type { Logger } from '../log/index.ts';
import type { EventStore, StoreEvent } from '../store/index.ts';
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
  if (config.storage.type !== 'redis') return undefined;
  const { store, replies, identity, ...shared } = deps;
  return createCluster({
    url: config.storage.url,
    keyPrefix: config.storage.keyPrefix,
    leaseMs: config.storage.leaseMs,
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
