/**
 * Watching one turn as a task: its stored frames (`agent.history`) folded first, then its live frames
 * off the bus, through the one mapping (`foldFrame`).
 *
 * Contracts:
 * - `watchSession` subscribes to the session's live frames at once (before the caller sends anything),
 *   buffering them until `follow(turnId)` names the turn; then the log is read and folded, and the
 *   buffered and later live frames are folded after it (a durable frame already in the log, seq ≤ the
 *   log's last seq, is not folded twice).
 * - With instances sharing one Redis, `interest` asks for the session's frames from the others; the log
 *   is read once they will arrive, so nothing falls between the log and the live frames.
 * - `onChange` is called with the previous and the new view on every change (after the log's fold, the
 *   first call has `prev` undefined). `close()` unsubscribes; call it in every path.
 */
import type { AgentCommands, AgentEvents, AgentFrame } from '../agent/index.ts';
import type { Bus } from '../bus/index.ts';
import type { SessionKey } from '../session-id.ts';
import { foldFrame, type TaskView } from './task-view.ts';

/** The bus as the face uses it: the agent's commands, and every event (it picks the agent's frames). */
export interface A2aBus {
  execute: Bus<AgentCommands, AgentEvents>['execute'];
  onAny(listener: (event: { name: string; payload: unknown }) => unknown): () => void;
}

/** Where a session's frames from other instances are asked for (the WebSocket gateway's SessionInterest). */
export interface SessionInterest {
  watch(sessionId: string): Promise<void>;
  unwatch(sessionId: string): void;
}

const DURABLE_SKIP = new Set(['thinking', 'chunk']);

export interface TurnWatch {
  /** Names the turn, reads its log and starts folding; resolves with the view (undefined: no such turn). */
  follow(turnId: string): Promise<TaskView | undefined>;
  readonly view: TaskView | undefined;
  close(): void;
}

export function watchSession(
  bus: A2aBus,
  interest: SessionInterest | undefined,
  sessionKey: SessionKey,
  contextId: string,
  onChange: (prev: TaskView | undefined, next: TaskView) => void,
): TurnWatch {
  let buffered: AgentFrame[] | undefined = [];
  let turnId: string | undefined;
  let view: TaskView | undefined;
  let lastSeq = 0;
  const apply = (frame: AgentFrame) => {
    if (turnId === undefined) return;
    const seq = (frame.data as { seq?: number }).seq ?? 0;
    if (!DURABLE_SKIP.has(frame.event) && seq <= lastSeq) return;
    const next = foldFrame(view, frame, contextId, turnId);
    if (next && next !== view) {
      const prev = view;
      view = next;
      onChange(prev, next);
    }
  };
  const off = bus.onAny((e) => {
    if (!e.name.startsWith('agent.')) return;
    const data = e.payload as { sessionId?: string };
    if (data.sessionId !== sessionKey) return;
    const frame = { event: e.name.slice('agent.'.length), data } as AgentFrame;
    if (buffered) buffered.push(frame);
    else apply(frame);
  });
  const watching = interest?.watch(sessionKey);
  watching?.catch(() => undefined); // awaited (and so reported) by follow
  return {
    get view() {
      return view;
    },
    async follow(id) {
      turnId = id;
      await watching;
      const { frames, lastSeq: last } = await bus.execute('agent.history', { sessionId: sessionKey, since: 0 }, { sessionId: sessionKey });
      for (const frame of frames) apply(frame);
      lastSeq = last;
      const early = buffered ?? [];
      buffered = undefined;
      for (const frame of early) apply(frame);
      return view;
    },
    close() {
      off();
      interest?.unwatch(sessionKey);
    },
  };
}
