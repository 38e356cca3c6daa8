/** What the follower is built on: the bus it hears, the store it reads, the cluster's interest. */
import type { Bus, CommandSpec, EventSpec } from '../../bus/index.ts';
import type { SessionEvent } from '../../conversation/session-events.ts';
import type { EventStore } from '../../store/types.ts';

/** Where a session's frames from other instances are asked for (the cluster's; none on a lone instance). */
export interface FrameInterest {
  /** Resolves once the session's frames from other instances will arrive here. */
  watch(sessionId: string): Promise<void>;
  unwatch(sessionId: string): void;
}

/**
 * The bus as a follower hears it: by session. A session's listeners hear an event before the listeners of its name
 * (bus.ts), so a face reading what a waiter applied, on the same event, finds it applied.
 */
export type FollowBus = Pick<Bus<CommandSpec, EventSpec>, 'onSession'>;

export type FollowStore = Pick<
  EventStore<SessionEvent>,
  'read' | 'readTurn' | 'turns' | 'list' | 'recent' | 'turnTotal'
>;
