/**
 * `followTurn`: how every face follows a turn, from its log, then live; and the session replay (WebSocket `subscribe`).
 * - `watch(session)` starts collecting the session's live steps at once and asks other instances for them
 *   (`interest`); `follow(turn, onStep, since)` then reads the turn's stored events once those arrive, and hands
 *   `onStep` each step after `since` once: stored ones, then live ones (a live fact the read gave, same seq, is
 *   dropped; transient frames pass, but an `awaiting` no newer than the read, which ends with the one it implies),
 *   nothing after the turn's end or `close()`. It resolves once the stored steps were handed on, with whether the
 *   store knows the turn. `close()` a watch in every path.
 * - `followSent(session, correlationId, onStep)` follows live the turn the caller's own command starts: steps with
 *   the correlation id until `named(turnId)`, then the turn's; nothing read, no interest (the cluster watches a turn
 *   it forwards).
 * - `replay(session, since, deliver, isClosed)` hands on the stored facts after `since` until the log has nothing
 *   newer (when `deliver` returns a promise, the next fact waits for it, and none follows once `isClosed()`); the caller watches the interest first and subscribes right after, so nothing durable falls between.
 */
import {
  AWAITING_EVENT,
  STORED_EVENT,
  transientNameOf,
  type AwaitingData,
  type SessionStoredEvent,
  type TransientFrame,
} from '../frames.ts';
import { endsTurn, factStep, seqOfStep, storedSteps, turnOfStep, type TurnStep } from './steps.ts';
import { sessionsByRecency, turnPage, type TurnPageQuery } from './turn-pages.ts';
import type { FollowBus, FollowStore, FrameInterest } from './types.ts';
import type { ReplySoFar, ReplyTracker } from './reply-so-far.ts';

export interface SessionWatch {
  follow(turnId: string, onStep: (step: TurnStep) => void, since?: number): Promise<{ known: boolean }>;
  close(): void;
}

export interface SentTurn {
  named(turnId: string): void;
  close(): void;
}

type Listener = (step: TurnStep, correlationId: string) => void;

/** Hands on the steps of one turn until its end or `close()`. */
function turnSink(onStep: (step: TurnStep) => void) {
  let ended = false;
  let closed = false;
  return {
    pass(step: TurnStep) {
      if (closed || ended) return;
      ended = endsTurn(step);
      onStep(step);
    },
    close: () => void (closed = true),
  };
}

export function createTurnFollower(deps: {
  bus: FollowBus;
  store: FollowStore;
  interest?: FrameInterest | undefined;
  /** The reply each session streams (reply-so-far.ts); none: `replySoFar` is always undefined. */
  replies?: Pick<ReplyTracker, 'of'>;
}) {
  const { store, interest } = deps;
  /** Hears the session's live steps (its facts, transient frames and `awaiting`) until the returned function is called. */
  const listen = (sessionId: string, listener: Listener): (() => void) =>
    deps.bus.onSession(sessionId, (e) => {
      if (e.name === STORED_EVENT) return listener(factStep(e.payload as SessionStoredEvent), e.correlationId);
      if (e.name === AWAITING_EVENT)
        return listener({ kind: 'awaiting', data: e.payload as AwaitingData, ts: e.ts }, e.correlationId);
      const event = transientNameOf(e.name);
      if (event === undefined) return; // another event of the session (a tool's progress)
      listener({ kind: 'frame', frame: { event, data: e.payload } as TransientFrame, ts: e.ts }, e.correlationId);
    });

  function watch(sessionId: string): SessionWatch {
    let early: TurnStep[] | undefined = [];
    let live: ((step: TurnStep) => void) | undefined;
    let sink: ReturnType<typeof turnSink> | undefined;
    let closed = false;
    const unlisten = listen(sessionId, (step) => (early ? early.push(step) : live?.(step)));
    const watching = interest?.watch(sessionId);
    watching?.catch(() => undefined); // awaited (and so reported) by follow
    return {
      async follow(turnId, onStep, since = 0) {
        await watching;
        const stored = await store.readTurn(sessionId, turnId);
        const read = new Set(stored.map((e) => e.seq));
        const readUpTo = stored.at(-1)?.seq ?? 0;
        sink = turnSink(onStep);
        if (closed) sink.close();
        for (const step of storedSteps(stored)) if (seqOfStep(step) > since) sink.pass(step);
        const wasRead = (step: TurnStep) =>
          step.kind === 'fact' ? read.has(step.stored.seq) : step.kind === 'awaiting' && step.data.seq <= readUpTo;
        live = (step) => {
          if (turnOfStep(step) === turnId && !wasRead(step)) sink?.pass(step);
        };
        const collected = early ?? [];
        early = undefined;
        for (const step of collected) live(step);
        return { known: stored.length > 0 };
      },
      close() {
        if (closed) return;
        closed = true;
        sink?.close();
        unlisten();
        interest?.unwatch(sessionId);
      },
    };
  }

  return {
    watch,
    /** `watch(session).follow(turn, …)`; the watch is what it resolves with (close it). */
    async followTurn(
      sessionId: string,
      turnId: string,
      onStep: (step: TurnStep) => void,
      since = 0,
    ): Promise<SessionWatch & { known: boolean }> {
      const w = watch(sessionId);
      try {
        return { ...w, ...(await w.follow(turnId, onStep, since)) };
      } catch (err) {
        w.close();
        throw err;
      }
    },
    followSent(sessionId: string, correlationId: string, onStep: (step: TurnStep) => void): SentTurn {
      const sink = turnSink(onStep);
      let turnId: string | undefined;
      const unlisten = listen(sessionId, (step, correlation) => {
        if (turnId === undefined ? correlation === correlationId : turnOfStep(step) === turnId) sink.pass(step);
      });
      return {
        named: (id) => void (turnId = id),
        close() {
          sink.close();
          unlisten();
        },
      };
    },
    steps: async (sessionId: string, turnId: string): Promise<TurnStep[]> =>
      storedSteps(await store.readTurn(sessionId, turnId)),
    turnPage: (query: TurnPageQuery) => turnPage(store, query),
    /** The sessions of `owner` (every session when undefined; or `only`), most recently updated first (turn-pages.ts). */
    sessionsByRecency: (owner: string | undefined, only?: string) => sessionsByRecency(store, owner, only),
    turnIds: async (sessionId: string): Promise<string[]> => (await store.turns(sessionId)).map((t) => t.turnId),
    turnCount: async (sessionId: string): Promise<number> => (await store.turns(sessionId)).length,
    /** How many turns the sessions of `owner` hold (every session's when undefined): kept by the store, not counted. */
    turnTotal: (owner: string | undefined): Promise<number> => store.turnTotal(owner),
    watchInterest: (sessionId: string): Promise<void> | undefined => interest?.watch(sessionId),
    unwatchInterest: (sessionId: string): void => interest?.unwatch(sessionId),
    /** The reply the session's turn streamed so far, if it streams one (reply-so-far.ts: read it between bus events). */
    replySoFar: (sessionId: string): ReplySoFar | undefined => deps.replies?.of(sessionId),
    async replay(
      sessionId: string,
      since: number | undefined,
      deliver: (stored: SessionStoredEvent) => void | Promise<void>,
      isClosed: () => boolean,
    ): Promise<void> {
      if (since === undefined) return;
      for (let after = since; ;) {
        const stored = await store.read(sessionId, after);
        if (stored.length === 0 || isClosed()) return;
        for (const e of stored) {
          const room = deliver(e); // a promise: wait for the reader before the next one
          if (room && (await room, isClosed())) return;
        }
        after = stored.at(-1)?.seq ?? after;
      }
    },
    /** Nothing to let go: each watch holds its own subscription. */
    close: () => undefined,
  };
}
export type TurnFollower = ReturnType<typeof createTurnFollower>;
