/**
 * A session's state as one fold of its stored events (Emmett's `initialState` / `evolve`): everything a
 * session holds between commands, the same function at open (over the log) and live (after each append).
 *
 * Contracts:
 * - `evolve` is applied to an event once the store accepted it, never before: at open to the log read
 *   back, live from the outbox's `onStored`. So a session reopened from its log holds what the live one held.
 * - The state is owned by its fold: `evolve` updates it in place and returns it (the history projection
 *   is incremental, so no step copies a session's history).
 * - It holds the model's history (history.ts), the usage totals (context.ts `applyUsage`), the messages
 *   queued and not started (a `messageQueued` until the `userMessage`, `turnFailed` or `response` of its
 *   turnId, or a `reset`), the turn started and not ended (open-turn.ts), and the questions waiting for a
 *   person (src/conversation/questions.ts): each pending from its asking event until its answer, its
 *   turn's end or a reset; closed ones are remembered by id with the family of answers they took; and the remote
 *   tasks of calls without a result (remote-tasks.ts); and the ids of its last RECENT_TURNS turns (their
 *   `messageQueued` or `userMessage`), which a retry of a message with its own turn id finds before the store's turn
 *   index could (decide.ts); and the turns another turn's start left without an end (`unended`); and the MCP Apps kept
 *   with its tool calls (`apps`: a call's last `toolResult` kept an app, not a note), which an app's call is decided
 *   against (decide.ts): kept across resets, as the log keeps the results that hold them, and across a compaction,
 *   whose event carries them (a session read from its `readFrom` knows them).
 */
import type { Question, QuestionFamily } from '../../conversation/questions.ts';
import { QUESTION_KINDS, answerOf, familyOf, questionOf } from '../../conversation/questions.ts';
import type { SessionEvent, SessionEventOf } from '../../conversation/session-events.ts';
import type { TurnMessage } from '../../conversation/turn-contract.ts';
import type { Usage } from '../../llm/types.ts';
import { applyUsage } from '../compaction/context.ts';
import { createHistory, type History } from './history.ts';
import { evolveOpenTurn, resumeTurn, type OpenTurn } from './open-turn.ts';
import { evolveRemoteTasks, type RemoteTasks } from './remote-tasks.ts';

export interface SessionState {
  readonly sessionId: string;
  /** The seq of the last event folded in. */
  lastSeq: number;
  /** The model's history since the last reset or summary (folded in place). */
  readonly history: History;
  /** Model usage of every step so far (summaries and tool servers' sampling included). */
  readonly usage: Usage;
  /** The messages queued and not started, in queue order (turnId → the message, with its event's seq). */
  readonly queued: Map<string, { seq: number; message: TurnMessage }>;
  /** The turn started and not ended, if any. */
  openTurn: OpenTurn | undefined;
  /**
   * Turns whose `userMessage` is stored, then another turn's, and no end of theirs: their end was lost (a store outage
   * took the write of their `response`). Their owner ends them (decide.ts `unendedTurns`), once each.
   */
  readonly unended: Set<string>;
  /** The questions waiting for a person, oldest first, by id. */
  readonly questions: Map<string, Question>;
  /** The questions closed (answered, expired, their turn ended, reset), by id. */
  readonly closed: Map<string, QuestionFamily>;
  /** The tasks tool servers run calls without a result as, by callId (remote-tasks.ts). */
  readonly remoteTasks: RemoteTasks;
  /** The ids of the last RECENT_TURNS turns folded in, oldest first. */
  readonly recentTurns: string[];
  /** The apps kept with tool calls: the call's id → its server's id (made with the first: most sessions keep none). */
  apps: Map<string, string> | undefined;
}

/** How many turn ids a session remembers (a retry of a turn within them is found without the store). */
export const RECENT_TURNS = 64;

export type Stored = { seq: number; event: SessionEvent };

export function initialState(sessionId: string): SessionState {
  return {
    sessionId,
    lastSeq: 0,
    history: createHistory(),
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    queued: new Map(),
    openTurn: undefined,
    unended: new Set(),
    questions: new Map(),
    closed: new Map(),
    remoteTasks: new Map(),
    recentTurns: [],
    apps: undefined,
  };
}

export function evolve(state: SessionState, { seq, event: e }: Stored): SessionState {
  state.lastSeq = seq;
  state.history.apply(e, seq);
  applyUsage(state.usage, e);
  evolveQueue(state, e, seq);
  const open = state.openTurn?.user.turnId;
  if (e.type === 'userMessage' && open !== undefined && open !== e.turnId) state.unended.add(open);
  else if (e.type === 'response' || e.type === 'turnFailed') state.unended.delete(e.turnId);
  state.openTurn = evolveOpenTurn(state.openTurn, e);
  evolveQuestions(state, e);
  evolveRemoteTasks(state.remoteTasks, e);
  if (e.type === 'toolResult') evolveApps(state, e);
  else if (e.type === 'contextCompacted' && e.apps)
    for (const [callId, serverId] of Object.entries(e.apps)) (state.apps ??= new Map()).set(callId, serverId);
  if ((e.type === 'messageQueued' || e.type === 'userMessage') && !state.recentTurns.includes(e.turnId)) {
    state.recentTurns.push(e.turnId);
    if (state.recentTurns.length > RECENT_TURNS) state.recentTurns.shift();
  }
  return state;
}

/** The state after `events` (a log read back; an event without a seq takes the next one). */
export function foldSession(sessionId: string, events: Iterable<SessionEvent | Stored>): SessionState {
  const state = initialState(sessionId);
  for (const e of events) evolve(state, 'event' in e ? e : { seq: state.lastSeq + 1, event: e });
  return state;
}

/** A turn's message: what was sent (a command's payload, a `messageQueued`), its optional parts only when set. */
export const turnMessage = (
  turnId: string,
  correlationId: string,
  sent: Pick<SessionEventOf<'messageQueued'>, 'content' | 'image' | 'hops' | 'attached' | 'clientTools'>,
): TurnMessage => ({
  turnId,
  correlationId,
  content: sent.content,
  ...(sent.image && { image: sent.image }),
  ...(sent.hops !== undefined && { hops: sent.hops }),
  ...(sent.attached && { attached: sent.attached }),
  ...(sent.clientTools && { clientTools: sent.clientTools }),
});

function evolveQueue({ queued }: SessionState, e: SessionEvent, seq: number): void {
  switch (e.type) {
    case 'messageQueued':
      queued.set(e.turnId, { seq, message: turnMessage(e.turnId, e.correlationId, e) });
      return;
    case 'userMessage':
    case 'turnFailed':
    case 'response':
      queued.delete(e.turnId);
      return;
    case 'reset':
      queued.clear();
      return;
    default:
      return;
  }
}

function evolveApps(state: SessionState, e: SessionEventOf<'toolResult'>): void {
  if (e.app && !('note' in e.app)) (state.apps ??= new Map()).set(e.callId, e.serverId);
  else state.apps?.delete(e.callId);
}

function evolveQuestions(state: SessionState, e: SessionEvent): void {
  const { questions, closed } = state;
  const close = (q: Question) => {
    questions.delete(q.id);
    closed.set(q.id, QUESTION_KINDS[q.kind].family);
  };
  const asked = questionOf(e, state.sessionId);
  if (asked) {
    closed.delete(asked.id);
    questions.set(asked.id, asked);
    return;
  }
  const answered = answerOf(e);
  if (answered) {
    questions.delete(answered.id);
    closed.set(answered.id, familyOf(answered.answer));
    return;
  }
  if (questions.size === 0) return;
  if (e.type === 'reset') for (const q of [...questions.values()]) close(q);
  else if (e.type === 'response' || e.type === 'turnFailed')
    for (const q of [...questions.values()]) if (q.turnId === e.turnId) close(q);
}

/** The messages still queued, in order (what a session opened from its log runs next). */
export const queuedOf = (events: Iterable<SessionEvent>): TurnMessage[] =>
  [...foldSession('', events).queued.values()].map((q) => q.message);

/** The turn `events` leave open, if any (open-turn.ts). */
export const openTurnOf = (events: Iterable<SessionEvent>): OpenTurn | undefined => foldSession('', events).openTurn;

/** The turn a session opened from `events` resumes (open-turn.ts `resumeTurn`), if any. */
export function resumeOf(events: Iterable<SessionEvent>, now: number): TurnMessage | undefined {
  const state = foldSession('', events);
  return resumeTurn(state.openTurn, state.questions, now, state.remoteTasks);
}

/** The seq of the oldest message still queued, if any (a compaction keeps it readable). */
export const firstQueuedSeq = (state: SessionState): number | undefined =>
  state.queued.size === 0 ? undefined : Math.min(...[...state.queued.values()].map((q) => q.seq));

/** The usage totals with those of `unstored` (events handed to the store, not stored yet) folded on top. */
export function usageWith(state: SessionState, unstored: readonly SessionEvent[]): Usage {
  const total = { ...state.usage };
  for (const e of unstored) applyUsage(total, e);
  return total;
}
