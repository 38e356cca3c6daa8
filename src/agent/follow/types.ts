/** What the follower is built on: the bus it hears, the store it reads, the cluster's interest. */
import type { Bus, CommandSpec } from '../../bus/index.ts';
import type { SessionEvent } from '../../conversation/session-events.ts';
import type { EventStore } from '../../store/types.ts';
import type { AgentEvents, FrameName } from '../frames.ts';

/** Every frame's name, for the follower to hear `agent.<name>` (a compile error below names one left out). */
export const FRAME_NAMES = [
  'userMessage',
  'thinking',
  'chunk',
  'toolCall',
  'toolResult',
  'response',
  'toolApprovalRequested',
  'toolApprovalResolved',
  'elicitationRequested',
  'elicitationResolved',
  'clientToolRequested',
  'clientToolResolved',
  'error',
  'conversationReset',
  'contextCompacted',
  'reasoning',
] as const satisfies readonly FrameName[];
type Unlisted = Exclude<FrameName, (typeof FRAME_NAMES)[number]>;
export type EveryFrameListed = [Unlisted] extends [never] ? true : { unlisted: Unlisted };
true satisfies EveryFrameListed;

/** Where a session's frames from other instances are asked for (the cluster's; none on a lone instance). */
export interface FrameInterest {
  /** Resolves once the session's frames from other instances will arrive here. */
  watch(sessionId: string): Promise<void>;
  unwatch(sessionId: string): void;
}

/**
 * The bus as a follower hears it. Its listeners are registered when the follower is made, so they run before any
 * registered later (a face reading what a waiter applied, on the same event, finds it applied).
 */
export type FollowBus = Pick<Bus<CommandSpec, AgentEvents>, 'on'>;

export type FollowStore = Pick<EventStore<SessionEvent>, 'read' | 'readTurn' | 'turns' | 'list'>;
