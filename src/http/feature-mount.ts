/**
 * A feature (schedules, memory, webhooks, spend, A2A push) as the service hosts it: its definition (`Feature`, which
 * its folder's `feature/index.ts` exports), the mount it builds (`FeatureMount`, as a face has FaceMount), and the
 * route kit its REST routes are written with. createApp lists the features; `src/http` imports none of them.
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

/**
 * A feature as createApp lists it (fastify-plugin's `name` and `dependencies`). createApp builds the features once each,
 * a feature only after those it `needs`, and hands each one:
 * - `given`: what createApp gives every feature, the agent file (`config`) and its shared ports (bus, record store,
 *   clock, log, metrics, turn follower, ...); a feature declares the part it reads.
 * - `needed`: the `port` of each feature it needs, by name. A need that is not listed, or needs that go round in a
 *   circle, stop the start-up with an error naming them (src/app/features.ts).
 * `build` returns its `mount` (absent: nothing to mount) and its `port`: what other features and createApp reach it
 * by (the agent's MemoryPort, the spend gate, the webhooks' outbox).
 */
export interface Feature<Name extends string, Given, Port = undefined, Needs extends object = Record<never, never>> {
  readonly name: Name;
  readonly needs?: readonly (keyof Needs & string)[];
  build(given: Given, needed: Needs): Built<Port>;
}

/** What a feature's `build` returns (`port` may be left out when it may be undefined). */
export type Built<Port> = { mount?: FeatureMount } & (undefined extends Port ? { port?: Port } : { port: Port });

export { defineRoute, type Route } from './route.ts';
export { parseInput } from './validate.ts';
export { createReply } from './routes/reply.ts';
export { withTimestamp } from './routes/shapes.ts';
export { ownerSchema } from './frames.ts';
