/**
 * A session's live elicitations: a tool server's question during one of its turn's calls becomes a
 * durable pending request (`elicitationRequested`), answered over REST or WebSocket, by its timeout,
 * or closed when its call ends; each answer is an `elicitationResolved` and goes back to the server.
 *
 * Contracts:
 * - `elicit` records the question and resolves with the answer. `expiresAt` is the earlier of
 *   `timeoutMs` from now and the call's deadline (its own timeout would end it first): then it is
 *   declined `by: "timeout"`. When the call ends or the server cancels its request first, it is
 *   cancelled `by: "call-ended"`. A closed session declines at once, recording nothing.
 * - `answer` checks the answer (src/agent/elicitations.ts: ELICITATION_NOT_FOUND,
 *   ELICITATION_ALREADY_RESOLVED, INVALID_REQUEST naming the field) before it marks the question
 *   answered, so a refused answer leaves it pending.
 * - `sync` (after the fold saw a turn end or a reset) resolves the live questions the fold closed
 *   with `cancel`, recording nothing more (their turn's end says it).
 * - `close` (the session leaves memory) answers the live questions `cancel` and records nothing: the
 *   turn's own end says what happened, or, when the process dies first, the next open does.
 * - `closeStale` (at open) resolves every question the log left pending as `cancel` by `restart`:
 *   the server's request died with the process.
 * - `onChange` tells the running turn a question opened (with what it asks) or closed: its waiting state.
 */
import { randomUUID } from 'node:crypto';
import type { QuestionChange } from '../../machines/turn.machine.ts';
import type { SendMeta } from '../bus/index.ts';
import type { Clock } from '../clock.ts';
import { EVENT_VERSION, type SessionEvent } from '../conversation/session-events.ts';
import type { Logger } from '../log/index.ts';
import { createArgsValidator, type ArgsValidator } from '../tools/args-validator.ts';
import type { ElicitationAnswer, ElicitationAsk } from '../tools/elicitation.ts';
import { checkContent, type Elicitations, type PendingElicitation } from './elicitations.ts';

let shared: ArgsValidator | undefined;
/** One validator for every session's answers (its compiled schemas are cached per schema object). */
export const contentValidator = (log: Logger): ArgsValidator => (shared ??= createArgsValidator(log));

export interface SessionElicitationDeps {
  sessionId: string;
  clock: Clock;
  timeoutMs: number;
  fold: Elicitations;
  validate: ArgsValidator;
  record: (meta: SendMeta, event: SessionEvent) => void;
  /** The correlation id of a turn's facts. */
  correlationOf: (turnId: string) => string;
  onChange: (change: QuestionChange) => void;
}

interface Live {
  resolve: (answer: ElicitationAnswer) => void;
  timer: NodeJS.Timeout;
}

export function createSessionElicitations(deps: SessionElicitationDeps) {
  const { sessionId, clock, fold } = deps;
  const live = new Map<string, Live>();
  let closed = false;

  /** Stores the resolution of a question already marked answered, and answers its server. */
  const settle = (p: PendingElicitation, answer: ElicitationAnswer, by: string) => {
    const event: SessionEvent = { v: EVENT_VERSION, type: 'elicitationResolved', turnId: p.turnId, id: p.id, action: answer.action, by, ...(answer.content && { content: answer.content }) };
    deps.record({ correlationId: deps.correlationOf(p.turnId), sessionId }, event);
    fold.apply(event);
    release(p.id, answer);
  };
  const release = (id: string, answer: ElicitationAnswer) => {
    const l = live.get(id);
    if (!l) return;
    live.delete(id);
    clearTimeout(l.timer);
    deps.onChange({ pending: false, id });
    l.resolve(answer);
  };
  /** Answers a question still live and pending (a timeout, the call's end); nothing when it was answered or released meanwhile. */
  const end = (id: string, answer: ElicitationAnswer, by: string) => {
    if (!live.has(id)) return;
    if (!fold.pending().some((p) => p.id === id)) return release(id, answer);
    settle(fold.answer(id), answer, by);
  };

  return {
    elicit(ask: ElicitationAsk, call: { turnId: string; callId: string }, options: { deadline: number; signal: AbortSignal }): Promise<ElicitationAnswer> {
      if (closed || options.signal.aborted) return Promise.resolve({ action: 'decline' });
      const now = clock.now();
      const expires = Math.min(now + deps.timeoutMs, options.deadline - 1_000);
      const expiresAt = new Date(expires).toISOString();
      const id = `el_${randomUUID()}`;
      const where = ask.mode === 'url' ? { url: ask.url } : { requestedSchema: ask.requestedSchema };
      const event: SessionEvent = {
        v: EVENT_VERSION, type: 'elicitationRequested', turnId: call.turnId, id, callId: call.callId, serverId: ask.serverId,
        message: ask.message, mode: ask.mode, ...where, expiresAt,
      };
      deps.record({ correlationId: deps.correlationOf(call.turnId), sessionId }, event);
      fold.apply(event);
      return new Promise((resolve) => {
        const timer = setTimeout(() => end(id, { action: 'decline' }, 'timeout'), Math.max(0, expires - now));
        timer.unref();
        live.set(id, { resolve, timer });
        deps.onChange({ pending: true, question: { id, kind: 'elicitation', serverId: ask.serverId, callId: call.callId, question: ask.message, expiresAt } });
        options.signal.addEventListener('abort', () => end(id, { action: 'cancel' }, 'call-ended'), { once: true });
      });
    },
    answer(id: string, answer: { action: ElicitationAnswer['action']; content?: unknown }, by: string): PendingElicitation {
      const p = fold.peek(id);
      const content = checkContent(p, answer, deps.validate);
      fold.answer(id);
      settle(p, { action: answer.action, ...(content && { content }) }, by);
      return p;
    },
    sync(): void {
      if (live.size === 0) return;
      const open = new Set(fold.pending().map((p) => p.id));
      for (const id of [...live.keys()]) if (!open.has(id)) release(id, { action: 'cancel' });
    },
    closeStale(): void {
      for (const p of fold.pending()) settle(fold.answer(p.id), { action: 'cancel' }, 'restart');
    },
    close(): void {
      closed = true;
      for (const id of [...live.keys()]) release(id, { action: 'cancel' });
    },
  };
}

export type SessionElicitations = ReturnType<typeof createSessionElicitations>;
