/**
 * The seam of one `subscribe{since}` on one connection, between the replay of the session's log and its topic: no
 * frame falls in it and none comes twice, whichever instance stored a frame and however late its live copy arrives
 * (an owner stores an event before it publishes it, so a replay may read a frame whose live copy comes after).
 *
 * Contract:
 * - `openSeam` hears the session's events on the bus at once (call it before the replay's first read) and holds them.
 * - `replayed(seq, event)` is told of each frame the replay sent. `caughtUp()` then sends the held frames the replay
 *   did not send, and later live ones the same way: dropped when older than the newest replayed frame or when it is
 *   that very frame (same seq, same event); transient frames (chunks) repeating its seq pass.
 * - Once a frame newer than the replay has gone out, every later live frame is newer still (a session's events come
 *   in seq order). Right after the dispatch of that frame (a microtask: by then the gateway's own listener has
 *   published it to the topic, which the connection did not hear yet), `goLive` joins the topic and the seam lets go,
 *   in one step: each frame comes from the seam or from the topic, never both, never neither.
 * - `close()` lets go without joining (a newer `subscribe{since}`, an `unsubscribe`, the connection's end).
 */
import type { FrontEndBus } from './front-bus.ts';
import { isSessionEvent, type BusEvent } from './session-frames.ts';
import { eventFrameOf } from './frames.ts';

export interface Seam {
  replayed(seq: number, event: string): void;
  caughtUp(): void;
  close(): void;
}

export interface SeamDeps {
  bus: Pick<FrontEndBus, 'onSession'>;
  sessionId: string;
  /** The seq the client already has (`since`). */
  since: number;
  frameOf: (e: BusEvent) => string;
  send: (text: string) => void;
  goLive: () => void;
}

export function openSeam(deps: SeamDeps): Seam {
  let held: BusEvent[] | undefined = [];
  let newest = { seq: deps.since, event: '' };
  let closed = false;
  let joining = false;
  const unlisten = deps.bus.onSession(deps.sessionId, (e) => (held ? held.push(e) : pass(e)));
  const close = () => {
    if (closed) return;
    closed = true;
    unlisten();
  };
  const join = () => {
    if (closed) return;
    close();
    deps.goLive();
  };

  function pass(e: BusEvent): void {
    if (closed || !isSessionEvent(e)) return;
    const seq = (e.payload as { seq?: unknown }).seq;
    if (typeof seq !== 'number') return deps.send(deps.frameOf(e)); // a tool's progress: no place in the log
    const event = eventFrameOf(e.name);
    if (seq < newest.seq || (seq === newest.seq && event === newest.event)) return;
    deps.send(deps.frameOf(e));
    if (seq === newest.seq) return;
    newest = { seq, event };
    if (!joining) queueMicrotask(join);
    joining = true;
  }

  return {
    replayed(seq, event) {
      if (seq >= newest.seq) newest = { seq, event };
    },
    caughtUp() {
      const early = held ?? [];
      held = undefined;
      for (const e of early) pass(e);
    },
    close,
  };
}
