/**
 * `followTurn`: the one way a face follows a turn, from its log, then live; and the session replay that
 * shares its seam (the WebSocket `subscribe`).
 *
 * Contracts:
 * - `watch(session)` starts collecting the session's live frames at once (one bus listener serves every
 *   watch, by session) and asks for them from other instances (`interest`: the cluster's fan-out);
 *   `follow(turn, onStep, since)` then reads the turn's stored events through the store's turn index,
 *   once the frames from elsewhere arrive, and hands `onStep` the steps after `since`: the stored ones,
 *   then the live ones (those collected meanwhile first), each once. A live frame the read already gave
 *   (same seq, same frame) is dropped; transient frames (thinking, chunk, errors nothing stored) pass.
 *   Nothing is handed on after the turn's end or `close()`. It resolves once the stored steps were
 *   handed on, with whether the store knows the turn.
 * - `close()` ends the watch (its listener and its interest); call it in every path.
 * - `steps(session, turn)` is the turn's stored steps alone (what a reader without a watch gets);
 *   `turnPage` pages turns across sessions (turn-pages.ts).
 * - `replay(session, since, deliver, isClosed)` hands on the session's stored frames after `since`,
 *   reading until the log has nothing newer; the caller watches the session's interest first
 *   (`watchInterest`) and subscribes to its live frames right after, so nothing durable falls between.
 */
import { toFrame, type AgentFrame } from '../frames.ts';
import { endsTurn, storedSteps, type TurnStep } from './steps.ts';
import { turnPage, type TurnPageQuery } from './turn-pages.ts';
import type { FollowBus, FollowStore, FrameInterest } from './types.ts';

export interface SessionWatch {
  follow(turnId: string, onStep: (step: TurnStep) => void, since?: number): Promise<{ known: boolean }>;
  close(): void;
}

type FrameStep = Extract<TurnStep, { kind: 'frame' }>;

export function createTurnFollower(deps: { bus: FollowBus; store: FollowStore; interest?: FrameInterest | undefined }) {
  const { store, interest } = deps;
  const listeners = new Map<string, Set<(step: FrameStep) => void>>();
  const off = deps.bus.onAny((e) => {
    if (!e.name.startsWith('agent.')) return;
    const data = e.payload as { sessionId?: string };
    const here = data.sessionId === undefined ? undefined : listeners.get(data.sessionId);
    if (!here) return;
    const step: FrameStep = { kind: 'frame', frame: { event: e.name.slice('agent.'.length), data } as AgentFrame, at: new Date(e.ts).toISOString() };
    for (const listener of [...here]) listener(step);
  });

  function watch(sessionId: string): SessionWatch {
    let early: FrameStep[] | undefined = [];
    let live: ((step: FrameStep) => void) | undefined;
    let closed = false;
    const listener = (step: FrameStep) => (early ? early.push(step) : live?.(step));
    const here = listeners.get(sessionId) ?? new Set();
    listeners.set(sessionId, here.add(listener));
    const watching = interest?.watch(sessionId);
    watching?.catch(() => undefined); // awaited (and so reported) by follow
    return {
      async follow(turnId, onStep, since = 0) {
        await watching;
        const stored = await store.readTurn(sessionId, turnId);
        const read = new Set(stored.map((e) => `${e.seq} ${toFrame(e)?.event ?? ''}`));
        let ended = false;
        const pass = (step: TurnStep) => {
          if (closed || ended) return;
          ended = endsTurn(step);
          onStep(step);
        };
        for (const step of storedSteps(stored)) if ((step.kind === 'queued' ? step.seq : (step.frame.data.seq ?? 0)) > since) pass(step);
        live = (step) => {
          const data = step.frame.data as { turnId?: string; seq?: number };
          if (data.turnId === turnId && !read.has(`${data.seq} ${step.frame.event}`)) pass(step);
        };
        const collected = early ?? [];
        early = undefined;
        for (const step of collected) live(step);
        return { known: stored.length > 0 };
      },
      close() {
        if (closed) return;
        closed = true;
        here.delete(listener);
        if (here.size === 0 && listeners.get(sessionId) === here) listeners.delete(sessionId);
        interest?.unwatch(sessionId);
      },
    };
  }

  return {
    watch,
    /** `watch(session).follow(turn, …)`; the watch is what it resolves with (close it). */
    async followTurn(sessionId: string, turnId: string, onStep: (step: TurnStep) => void, since = 0): Promise<SessionWatch & { known: boolean }> {
      const w = watch(sessionId);
      try {
        return { ...w, ...(await w.follow(turnId, onStep, since)) };
      } catch (err) {
        w.close();
        throw err;
      }
    },
    steps: async (sessionId: string, turnId: string): Promise<TurnStep[]> => storedSteps(await store.readTurn(sessionId, turnId)),
    /** A page of turns across sessions (turn-pages.ts); how many turns a session has. */
    turnPage: (query: TurnPageQuery) => turnPage(store, query),
    turnCount: async (sessionId: string): Promise<number> => (await store.turns(sessionId)).length,
    watchInterest: (sessionId: string): Promise<void> | undefined => interest?.watch(sessionId),
    unwatchInterest: (sessionId: string): void => interest?.unwatch(sessionId),
    async replay(sessionId: string, since: number | undefined, deliver: (frame: AgentFrame) => void, isClosed: () => boolean): Promise<void> {
      if (since === undefined) return;
      for (let after = since; ; ) {
        const stored = await store.read(sessionId, after);
        if (stored.length === 0 || isClosed()) return;
        for (const e of stored) {
          const frame = toFrame(e);
          if (frame) deliver(frame);
        }
        after = stored.at(-1)?.seq ?? after;
      }
    },
    close: off,
  };
}
export type TurnFollower = ReturnType<typeof createTurnFollower>;
