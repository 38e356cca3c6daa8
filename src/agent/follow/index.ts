/** Following a turn from its log, then live, through the store's turn index: the one way every face does it. */
export { createTurnFollower, type SentTurn, type SessionWatch, type TurnFollower } from './follower.ts';
export type { FollowBus, FollowStore, FrameInterest } from './types.ts';
export type { TurnStep } from './steps.ts';
export type { TurnPageQuery, ListedTurn } from './turn-pages.ts';
export { pipeEvents } from './event-pipe.ts';
