/**
 * The mount a feature (schedules, memory, webhooks) plugs into the service with, as a face does with FaceMount, and
 * the route kit its REST routes are written with. createApp lists the features; `src/http` imports none of them.
 * Contracts of a mount (every part optional):
 * - `routes()`: its REST routes, put in the route table (and the OpenAPI document) in the order the features are
 *   listed, after the agent's own and before the faces'.
 * - `open()`: prepares its storage, before the service starts (a failure stops the start-up).
 * - `start()`: registers its commands and starts its work, once the agent runs.
 * - `stop()`: starts no new work (before the sessions close); `close()`: lets go of its storage, after the sessions
 *   closed (what they handed it on the way out is kept).
 * - `reactions`: what it does after a fact is stored (src/agent/react): createApp hands every feature's reactions to
 *   the sessions, which run them from their checkpoints; a reaction's `name` is its checkpoint's key.
 */
import type { Reaction } from '../agent/index.ts';
import type { Route } from './route.ts';

export interface FeatureMount {
  /** Names it in start-up and shut-down logs. */
  name: string;
  routes?(): Route[];
  open?(): Promise<void>;
  start?(): Promise<void> | void;
  stop?(): Promise<void> | void;
  close?(): Promise<void> | void;
  reactions?: readonly Reaction[];
}

export { defineRoute, type Route } from './route.ts';
export { parseInput } from './validate.ts';
export { createReply } from './routes/reply.ts';
export { withTimestamp } from './routes/shapes.ts';
export { ownerSchema } from './frames.ts';
