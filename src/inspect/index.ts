import type { AnyActorRef } from 'xstate';

export { createInspectHub, type InspectHub } from './hub.ts';
export { startRelay } from './relay.ts';
export { createFrames } from './frames.ts';

/** Registers a root actor with the inspector under a readable id; returns the unregister function. */
export type RegisterActor = (id: string, actor: AnyActorRef) => () => void;
