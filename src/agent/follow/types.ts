/** What the follower is built on: the bus it hears, the store it reads, the cluster's interest. */
import type { SessionEvent } from '../../conversation/session-events.ts';
import type { EventStore } from '../../store/types.ts';

/** Where a session's frames from other instances are asked for (the cluster's interest; none on a lone instance). */
export interface FrameInterest {
  /** Resolves once the session's frames from other instances will arrive here. */
  watch(sessionId: string): Promise<void>;
  unwatch(sessionId: string): void;
}

/** The bus as a follower hears it: every event, with the time it stands for (`ts`, ms). */
export interface FollowBus {
  onAny(listener: (event: { name: string; payload: unknown; ts: number }) => unknown): () => void;
}

export type FollowStore = Pick<EventStore<SessionEvent>, 'read' | 'readTurn' | 'turns' | 'list'>;
