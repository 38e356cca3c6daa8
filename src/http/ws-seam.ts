/**
 * The seam of one `subscribe{since}` on one connection, between the replay of the session's log and its topic: no
 * frame falls in it and none comes twice, whichever instance stored a frame and however late its live copy arrives
 * (an owner stores an event before it publishes it, so a replay may read a frame whose live copy comes after).
 *
 * Contract:
 * - `openSeam` hears the session's events on the bus at once (call it before the replay's first read) and holds them.
 * - `replayed(seq)` is told of each stored fact the replay read. `caughtUp()` then sends the held events the replay
 *   did not cover, and later live ones the same way: a fact dropped when no newer than the newest replayed, a
 *   transient frame (chunks) when older (one repeating its seq passes).
 * - Once a fact newer than the replay has passed, every later live event is newer still (a session's events come
 *   in seq order). Right after the dispatch of that frame (a microtask: by then the gateway's own listener has
 *   published it to the topic, which the connection did not hear yet), `goLive` joins the topic and the seam lets go,
 *   in one step: each frame comes from the seam or from the topic, never both, never neither.
 * - `close()` lets go without joining (a newer `subscribe{since}`, an `unsubscribe`, the connection's end).
 * - With `replySoFar`, `caughtUp()` sends the held events bar chunks, then the reply the turn streamed so far (read
 *   then: it folds every chunk held, and the live ones after it follow it), unless the replay held that turn's end
 *   (stored before its live copy came). So the text the client joins is `replySoFar` and the live chunks after it:
 *   each live chunk then passes, even one older than the replay (relayed from another instance after the replay read
 *   a newer fact), unless the replay held its turn's end.
 */
import type { FrontEndBus } from './front-bus.ts';
import { STORED_EVENT } from '../agent/index.ts';
import type { ReplySoFar } from '../agent/index.ts';
import { isSessionEvent, replySoFarFrame, type BusEvent } from './session-frames.ts';

export interface Seam {
  /** `ended`: the turn whose end the replayed fact is (a `response`, a `turnFailed`). */
  replayed(seq: number, ended?: string): void;
  caughtUp(): void;
  close(): void;
}

export interface SeamDeps {
  bus: Pick<FrontEndBus, 'onSession'>;
  sessionId: string;
  /** The seq the client already has (`since`). */
  since: number;
  frameOf: (e: BusEvent) => string | undefined;
  send: (text: string) => void;
  goLive: () => void;
  /** The reply the session's turn streamed so far (src/agent/follow/reply-so-far.ts). */
  replySoFar?: () => ReplySoFar | undefined;
}

export function openSeam(deps: SeamDeps): Seam {
  let held: BusEvent[] | undefined = [];
  let newest = deps.since;
  let closed = false;
  let joining = false;
  const endedInReplay = new Set<string>();
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

  /** With the reply so far sent, a chunk heard after it is text it lacks, whatever its seq, unless its turn ended. */
  const isNewText = (e: BusEvent): boolean =>
    deps.replySoFar !== undefined &&
    e.name === 'agent.chunk' &&
    !endedInReplay.has((e.payload as { turnId: string }).turnId);
  const send = (e: BusEvent) => {
    const text = deps.frameOf(e);
    if (text !== undefined) deps.send(text);
  };
  function pass(e: BusEvent): void {
    if (closed || !isSessionEvent(e)) return;
    const seq = (e.payload as { seq?: unknown }).seq;
    if (typeof seq !== 'number') return send(e); // a tool's progress: no place in the log
    if (e.name !== STORED_EVENT) return void ((seq >= newest || isNewText(e)) && send(e));
    if (seq <= newest) return;
    send(e);
    newest = seq;
    if (!joining) queueMicrotask(join);
    joining = true;
  }

  return {
    replayed(seq, ended) {
      if (seq > newest) newest = seq;
      if (ended !== undefined) endedInReplay.add(ended);
    },
    caughtUp() {
      const early = held ?? [];
      held = undefined;
      const reply = deps.replySoFar;
      for (const e of early) if (!reply || e.name !== 'agent.chunk') pass(e);
      const soFar = reply?.();
      if (soFar && !closed && !endedInReplay.has(soFar.turnId)) deps.send(replySoFarFrame(soFar));
    },
    close,
  };
}
