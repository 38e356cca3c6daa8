/**
 * XState inspection events → frames as `@statelyai/inspect`'s converter makes them (test/unit/inspect-frames.test.ts
 * compares the two), cycles, functions and depth included. Unless `content` is on, conversation content becomes
 * `[content]` and per-chunk events are dropped; secrets are redacted either way.
 */
import { configure } from 'safe-stable-stringify';
import type { AnyActorRef, InspectionEvent } from 'xstate';

/** The @statelyai/inspect format version these frames follow. */
const INSPECT_FORMAT_VERSION = '0.7.2';

const stringify = configure({ maximumDepth: 10 });
const replacer = (_key: string, value: unknown): unknown =>
  typeof value === 'function' ? { type: (value as { name: string }).name } : value;
const json = (value: unknown): unknown => JSON.parse(stringify(value, replacer) ?? 'null');

/** Keys whose values are conversation content: hidden unless content is opted in. */
const CONTENT_KEYS = new Set([
  'content',
  'text',
  'question',
  'args',
  'arguments',
  'result',
  'results',
  'outcome',
  'outcomes',
  'messages',
  'history',
  'image',
  'base64',
  'reply',
  'lastText',
  'prompt',
  'systemPrompt',
  'step',
]);
/** Events that carry each piece of a reply as it streams. */
const CHUNK_EVENTS = new Set(['chunk', 'model.text']);

export interface FrameOptions {
  content: boolean;
  redact: <T>(value: T) => T;
}

export type InspectFrame = Record<string, unknown> & {
  type: '@xstate.actor' | '@xstate.snapshot' | '@xstate.event';
  sessionId: string;
};

function hideContent(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(hideContent);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, CONTENT_KEYS.has(k) && v !== undefined ? '[content]' : hideContent(v)]),
  );
}

const rootOf = (actor: AnyActorRef): AnyActorRef => {
  let root = actor;
  while (root._parent) root = root._parent;
  return root;
};

export function createFrames(options: FrameOptions) {
  const clean = (value: unknown): unknown => options.redact(options.content ? json(value) : hideContent(json(value)));
  const base = (sessionId: string, rootId: string | undefined) => ({
    _version: INSPECT_FORMAT_VERSION,
    createdAt: Date.now().toString(),
    id: null,
    rootId,
    sessionId,
  });

  /** The `@xstate.actor` frame of a live actor (also what a late-joining viewer gets first). */
  const actorFrame = (actorRef: AnyActorRef): InspectFrame => {
    const definition = (actorRef as unknown as { logic?: { config?: unknown } }).logic?.config;
    const name =
      actorRef.id === actorRef.sessionId && definition
        ? ((definition as { id?: string }).id ?? actorRef.id)
        : actorRef.id;
    return {
      name,
      type: '@xstate.actor',
      definition: stringify(typeof definition === 'object' ? definition : { id: name }, replacer),
      ...base(actorRef.sessionId, rootOf(actorRef).sessionId),
      parentId: actorRef._parent?.sessionId,
      snapshot: clean(actorRef.getSnapshot()),
    };
  };

  const snapshotOf = (sessionId: string, rootId: string | undefined, event: unknown, state: unknown): InspectFrame => ({
    type: '@xstate.snapshot',
    event: clean(event),
    snapshot: clean(state),
    ...base(sessionId, rootId),
  });

  /** The `@xstate.snapshot` frame of an actor's current state, with the event that made it (late join: none). */
  const snapshotFrame = (actorRef: AnyActorRef, event: unknown = { type: '@xstate.init' }): InspectFrame =>
    snapshotOf(actorRef.sessionId, rootOf(actorRef).sessionId, event, actorRef.getSnapshot());

  /** One inspection event → its frame, or undefined when it is not shown. */
  const fromInspection = (ev: InspectionEvent): InspectFrame | undefined => {
    const eventType = 'event' in ev ? (ev.event as { type?: string } | undefined)?.type : undefined;
    if (!options.content && eventType !== undefined && CHUNK_EVENTS.has(eventType)) return undefined;
    switch (ev.type) {
      case '@xstate.actor':
        return actorFrame(ev.actorRef as AnyActorRef);
      case '@xstate.snapshot':
        return snapshotOf(ev.actorRef.sessionId, ev.rootId, ev.event, ev.snapshot);
      case '@xstate.event':
        return {
          type: '@xstate.event',
          event: clean(ev.event),
          sourceId: ev.sourceRef?.sessionId,
          ...base(ev.actorRef.sessionId, ev.rootId),
        };
      default:
        return undefined;
    }
  };

  return { actorFrame, snapshotFrame, fromInspection };
}
