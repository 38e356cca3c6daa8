import type { AnyActorRef } from 'xstate';

export { createInspectHub, type InspectHub, type Viewer } from './hub.ts';
export { startRelay } from './relay.ts';
export { INSPECT_FORMAT_VERSION, createFrames, type InspectFrame } from './frames.ts';

/** Registers a root actor with the inspector under a readable id; returns the unregister function. */
export type RegisterActor = (id: string, actor: AnyActorRef) => () => void;
