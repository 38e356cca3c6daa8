/**
 * The inspection hub: live actors and the viewers that watch them. Actor systems are inspected only while a viewer
 * is attached. A joining viewer first gets an `@xstate.actor` and an `@xstate.snapshot` frame per live actor (of its
 * `filter`), then the live stream. A viewer behind (one of its frames was refused, in the late join too) gets
 * nothing until `drained`: then `{ type: "resync" }` and a fresh late-join state, never an unbounded queue.
 */
import type { AnyActorRef, InspectionEvent, Subscription } from 'xstate';
import { createFrames, type FrameOptions, type InspectFrame } from './frames.ts';

export interface Viewer {
  /** Sends one frame (JSON); returns false when the viewer is behind (its buffer is over the limit). */
  send(frame: string): boolean;
}

interface Root {
  actor: AnyActorRef;
  watch?: Subscription;
}

interface Attached {
  viewer: Viewer;
  /** Readable id (`turn:default`) of the actor this viewer watches, with its descendants; all when undefined. */
  filter: string | undefined;
  behind: boolean;
}

export type InspectHub = ReturnType<typeof createInspectHub>;

export function createInspectHub(options: FrameOptions) {
  const frames = createFrames(options);
  const roots = new Map<string, Root>(); // by readable id
  const viewers = new Set<Attached>();

  /** The actor and its live descendants, parents first. */
  const tree = (actor: AnyActorRef): AnyActorRef[] => {
    const children = Object.values(
      (actor.getSnapshot() as { children?: Record<string, AnyActorRef | undefined> }).children ?? {},
    );
    return [actor, ...children.filter((c): c is AnyActorRef => c !== undefined).flatMap(tree)];
  };
  /** Whether a frame of the actor with this xstate session id belongs to the viewer's filter. */
  const wants = (attached: Attached, sessionId: string, rootSessionId: string | undefined): boolean => {
    if (attached.filter === undefined) return true;
    const root = roots.get(attached.filter);
    return root !== undefined && (root.actor.sessionId === sessionId || root.actor.sessionId === rootSessionId);
  };

  /** Sends `text` unless the viewer is behind; a send it refused (dropped) makes it behind. */
  const deliver = (attached: Attached, text: string): void => {
    if (!attached.behind && !attached.viewer.send(text)) attached.behind = true;
  };

  const lateJoin = (attached: Attached): void => {
    for (const [id, root] of roots) {
      if (attached.filter !== undefined && attached.filter !== id) continue;
      for (const actor of tree(root.actor)) {
        deliver(attached, JSON.stringify(frames.actorFrame(actor)));
        deliver(attached, JSON.stringify(frames.snapshotFrame(actor)));
        if (attached.behind) return;
      }
    }
  };

  const broadcast = (frame: InspectFrame): void => {
    let text: string | undefined;
    for (const attached of viewers) {
      if (attached.behind || !wants(attached, frame.sessionId, frame.rootId as string | undefined)) continue;
      deliver(attached, (text ??= JSON.stringify(frame)));
    }
  };

  // Inspection events are converted on the next turn of the loop, in order: an actor's snapshot
  // cannot be read while it is being created (as @statelyai/inspect's converter does too).
  const pending: InspectionEvent[] = [];
  const flush = (): void => {
    for (const ev of pending.splice(0)) {
      const frame = frames.fromInspection(ev);
      if (frame) broadcast(frame);
    }
  };
  const watch = (root: Root): void => {
    root.watch ??= root.actor.system.inspect((ev) => {
      if (pending.push(ev) === 1) setImmediate(flush);
    });
  };
  const unwatch = (root: Root): void => {
    root.watch?.unsubscribe();
    delete root.watch;
  };

  return {
    /** Registers a root actor under its readable id; returns the unregister function (call it when the actor stops). */
    register(id: string, actor: AnyActorRef): () => void {
      const root: Root = { actor };
      roots.set(id, root);
      if (viewers.size > 0) {
        watch(root);
        for (const attached of viewers)
          if (attached.filter === undefined || attached.filter === id)
            deliver(attached, JSON.stringify(frames.actorFrame(actor)));
      }
      return () => {
        unwatch(root);
        if (roots.get(id) === root) roots.delete(id);
      };
    },

    /** Attaches a viewer (late-join state first); returns its handle. */
    attach(viewer: Viewer, filter?: string) {
      const attached: Attached = { viewer, filter, behind: false };
      if (viewers.size === 0) for (const root of roots.values()) watch(root);
      viewers.add(attached);
      lateJoin(attached);
      return {
        /** The viewer caught up: it gets a resync frame and a fresh late-join state. */
        drained(): void {
          if (!attached.behind) return;
          attached.behind = false;
          viewer.send(JSON.stringify({ type: 'resync' }));
          lateJoin(attached);
        },
        detach(): void {
          viewers.delete(attached);
          if (viewers.size === 0) for (const root of roots.values()) unwatch(root);
        },
      };
    },

    /** A fact about a root actor that is no machine event, sent as `{ type: "@agentd.<kind>", actorId, data }`. */
    notice(actorId: string, kind: string, data: unknown): void {
      let text: string | undefined;
      for (const attached of viewers) {
        if (attached.behind || (attached.filter !== undefined && attached.filter !== actorId)) continue;
        deliver(attached, (text ??= JSON.stringify({ type: `@agentd.${kind}`, actorId, data: options.redact(data) })));
      }
    },

    actorIds: (): string[] => [...roots.keys()],
    viewers: (): number => viewers.size,
    /** Whether actor systems are being inspected now (tests: no cost without a viewer). */
    watching: (): number => [...roots.values()].filter((r) => r.watch !== undefined).length,
  };
}
