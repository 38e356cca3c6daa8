/** Public face of the agent: the session service, its bus contract and the frames of its events. */
export { createAgentService, type AgentService, type AgentServiceOptions } from './service.ts';
export { createUnnamedExpiry } from './unnamed-expiry.ts';
export type * from './messages.ts';
export { DEFAULT_SESSION, approvalDecision } from './messages.ts';
export {
  REPLY_SEED_EVENT,
  STORED_EVENT,
  byFactType,
  frameOfEvent,
  isFaceOnly,
  toFrame,
  transientNameOf,
  type AwaitingData,
  type SessionStoredEvent,
  type TransientFrame,
} from './frames.ts';
export { NOT_SESSION_SCOPED, SESSION_COMMANDS, TAKE_OVER_COMMAND, type SessionCommand } from './session/commands.ts';
export { createTurnWaiter, type TurnWaiter } from './follow/turn-waiter.ts';
export { createToolRuns } from './follow/tool-runs.ts';
/** Following a turn from its log, then live, through the store's turn index: the one way every face does it. */
export { createTurnFollower, type SessionWatch, type TurnFollower } from './follow/follower.ts';
export { createReplyTracker, type ReplySoFar, type ReplyTracker } from './follow/reply-so-far.ts';
export { pipeEvents } from './follow/event-pipe.ts';
export type { FrameInterest } from './follow/types.ts';
export { endsTurn, endsTurnFact, seqOfStep, turnOfStep, type FactStep, type TurnStep } from './follow/steps.ts';
export type { ListedTurn } from './follow/turn-pages.ts';
export { createReactions, type Reaction, type Reactions } from './react/reactions.ts';
export { lastSeqOf } from './command-handlers.ts';
export type { HeldSession } from './store-lost.ts';
export type { SpendPort } from './session/spend-check.ts';
export type { MemoryCallContext, MemoryPort } from './memory-port.ts';
