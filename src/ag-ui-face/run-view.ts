/**
 * A run is a view of a turn: the ONE mapping from its steps (stored, then live) to AG-UI events, a pure fold
 * (docs/ag-ui.md, "Events"; test/unit/ag-ui-run-view.test.ts). Steps of other turns, or after the run ended,
 * send nothing; a fact with `seq ≤ since` was sent by the run that ended on the interrupt (folded, not sent). Chunks
 * count once the run saw a step begin: a re-run joining mid-step leaves that text to the `response`, which sends
 * what no chunk did. Every message and step is closed before the end, as @ag-ui/client's verifier wants. The run
 * ends on an interrupt when the turn says it waits (`awaiting`), naming every question it holds. A `turnResumed`
 * ends the run's text and starts a new text message with the reply so far (`restarted`). A result whose call kept
 * an MCP App is followed by its `ACTIVITY_SNAPSHOT` (app-activity.ts).
 */
import { EventType, PROTOCOL_VERSION, type Event, type RunFinishedOutcome } from '@ag-ui/core';
import {
  turnOfStep,
  type Question,
  type SessionStoredEvent,
  type TransientFrame,
  type TurnStep,
} from '../agent/index.ts';
import { questionOf } from '../conversation/questions.ts';
import type { SessionEventOf } from '../conversation/session-events.ts';
import { AppError, ERROR_TABLE, type ErrorCode } from '../errors/index.ts';
import { appActivityEvent } from './app-activity.ts';
import { interruptOf } from './interrupts.ts';
import { resultText, runError } from './run-events.ts';

/** What a run knows of the turn's questions before it follows it: those open, and those it answers itself. */
export interface HeldQuestions {
  open?: Question[];
  answering?: string[];
}

export const runView = (threadId: string, runId: string, turnId: string, since = 0, held: HeldQuestions = {}) => ({
  threadId,
  runId,
  turnId,
  since,
  /** The ids of the questions this run answers: an `awaiting` naming one came before its answers took effect. */
  answering: held.answering ?? [],
  /** Model steps begun in this run (`model step N`); whether the last is open; its calls, those without result. */
  steps: 0,
  stepOpen: false,
  stepCalls: 0,
  unsettled: 0,
  /** The run saw a step begin (the turn start, or a tool result): its chunks count from there. */
  joined: false,
  /** Text messages begun in this run; the open one, and the one of the current step (a tool call's parent). */
  texts: 0,
  textOpen: undefined as string | undefined,
  stepText: undefined as string | undefined,
  /** The reply text this run streamed (live chunks). */
  streamed: '',
  reasonings: 0,
  /** The turn's questions asked and not closed, oldest first (those asked before `since` too). */
  open: held.open ?? [],
  /** The arguments of the turn's calls by id (those before `since` too): an app's activity carries its call's. */
  args: {} as Readonly<Record<string, unknown>>,
  ended: false,
});
export type RunView = ReturnType<typeof runView>;

export const runStarted = (v: RunView): Event => ({
  type: EventType.RUN_STARTED,
  threadId: v.threadId,
  runId: v.runId,
  protocolVersion: PROTOCOL_VERSION,
});

const stepName = (n: number) => `model step ${n}`;

function closeText(v: RunView, out: Event[]): void {
  if (v.textOpen === undefined) return;
  out.push({ type: EventType.TEXT_MESSAGE_END, messageId: v.textOpen });
  v.textOpen = undefined;
}

function closeStep(v: RunView, out: Event[]): void {
  closeText(v, out);
  if (v.stepOpen) out.push({ type: EventType.STEP_FINISHED, stepName: stepName(v.steps) });
  v.stepOpen = false;
  v.stepText = undefined;
  v.stepCalls = 0;
  v.unsettled = 0;
}

/** The model's output belongs to the open step, or opens the next once its calls all have results. */
function inStep(v: RunView, out: Event[]): void {
  if (v.stepOpen && (v.stepCalls === 0 || v.unsettled > 0)) return;
  closeStep(v, out);
  v.stepOpen = true;
  out.push({ type: EventType.STEP_STARTED, stepName: stepName(++v.steps) });
}

function text(v: RunView, delta: string, out: Event[]): void {
  if (delta === '') return;
  inStep(v, out);
  if (v.textOpen === undefined) {
    v.textOpen = `${v.runId}-text-${++v.texts}`;
    v.stepText = v.textOpen;
    out.push({ type: EventType.TEXT_MESSAGE_START, messageId: v.textOpen, role: 'assistant' });
  }
  out.push({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: v.textOpen, delta });
}

const cancelled = (details: Record<string, unknown>) => details.reason === 'cancelled';

/** The reply's text this run did not stream, ahead of what it did; none on a resumed run (its predecessor sent it). */
function unsent(v: RunView, content: string): string {
  if (v.since > 0 || !content.endsWith(v.streamed)) return '';
  return content.slice(0, content.length - v.streamed.length);
}

/**
 * The turn was taken up after a restart: its reply so far (`content`) replaces what this run streamed. AG-UI text
 * is append-only, so the step ends, `agentd.stepRestarted` names the text messages it supersedes, and `content`
 * starts a new one that the next chunks extend (it and they join to the `response`).
 */
function restarted(v: RunView, data: { attempt: number; content: string }, out: Event[]): void {
  closeStep(v, out);
  const supersedes = Array.from({ length: v.texts }, (_, i) => `${v.runId}-text-${i + 1}`);
  out.push({ type: EventType.CUSTOM, name: 'agentd.stepRestarted', value: { attempt: data.attempt, supersedes } });
  v.joined = true;
  v.streamed = data.content;
  text(v, data.content, out);
}

function finished(v: RunView, out: Event[], outcome: RunFinishedOutcome): void {
  closeStep(v, out);
  out.push({ type: EventType.RUN_FINISHED, threadId: v.threadId, runId: v.runId, outcome });
  v.ended = true;
}

/** A turn's failure: the run is cancelled, or ends with `RUN_ERROR` and the error table's code. */
function failed(
  v: RunView,
  failure: { code: string; message: string; details: Record<string, unknown> },
  out: Event[],
) {
  const { code, message, details } = failure;
  if (cancelled(details)) return finished(v, out, { type: 'cancelled' });
  closeStep(v, out);
  const known = Object.hasOwn(ERROR_TABLE, code) ? (code as ErrorCode) : 'AGENT_ERROR';
  out.push(runError(new AppError(known, message, details)));
  v.ended = true;
}

function onTransient(v: RunView, frame: TransientFrame, out: Event[]): void {
  switch (frame.event) {
    case 'thinking':
      v.joined = true;
      return;
    case 'chunk':
      if (!v.joined) return;
      v.streamed += frame.data.content;
      return text(v, frame.data.content, out);
    case 'error':
      return failed(v, frame.data, out);
  }
}

function onToolCall(v: RunView, { callId: toolCallId, toolName, args }: SessionEventOf<'toolCall'>, out: Event[]) {
  closeText(v, out);
  inStep(v, out);
  v.stepCalls++;
  v.unsettled++;
  out.push(
    {
      type: EventType.TOOL_CALL_START,
      toolCallId,
      toolCallName: toolName,
      ...(v.stepText !== undefined && { parentMessageId: v.stepText }),
    },
    { type: EventType.TOOL_CALL_ARGS, toolCallId, delta: JSON.stringify(args ?? {}) },
    { type: EventType.TOOL_CALL_END, toolCallId },
  );
}

/** A call's result; then its MCP App, when it kept one (app-activity.ts). */
function onToolResult(v: RunView, e: SessionEventOf<'toolResult'>, out: Event[]): void {
  closeText(v, out);
  v.unsettled = Math.max(0, v.unsettled - 1);
  v.joined = true;
  out.push({
    type: EventType.TOOL_CALL_RESULT,
    messageId: `${v.runId}-result-${e.callId}`,
    toolCallId: e.callId,
    content: resultText(e.result),
    role: 'tool',
  });
  const app = appActivityEvent(e, v.args[e.callId]);
  if (app) out.push(app);
}

function onReasoning(v: RunView, reasoning: string, out: Event[]): void {
  closeText(v, out);
  inStep(v, out);
  const messageId = `${v.runId}-reasoning-${++v.reasonings}`;
  out.push(
    { type: EventType.REASONING_START, messageId },
    { type: EventType.REASONING_MESSAGE_START, messageId, role: 'reasoning' },
    { type: EventType.REASONING_MESSAGE_CONTENT, messageId, delta: reasoning },
    { type: EventType.REASONING_MESSAGE_END, messageId },
    { type: EventType.REASONING_END, messageId },
  );
}

/** A fact of the turn; one with `seq ≤ since` was sent by an earlier run (questions are folded all the same). */
function onFact(v: RunView, { event: e, seq, sessionId }: SessionStoredEvent, out: Event[]): void {
  const asked = questionOf(e, sessionId);
  if (asked) return void (v.open = [...v.open.filter((q) => q.id !== asked.id), asked]);
  if (e.type === 'questionClosed') {
    v.open = v.open.filter((q) => q.id !== e.id);
    if (seq > v.since) v.joined = true; // the turn goes on from here live (a budget's step streams its reply anew)
    return;
  }
  if (e.type === 'toolCall') v.args = { ...v.args, [e.callId]: e.args };
  if (seq <= v.since) return;
  switch (e.type) {
    case 'reasoning':
      return onReasoning(v, e.text, out);
    case 'toolCall':
      return onToolCall(v, e, out);
    case 'toolResult':
      return onToolResult(v, e, out);
    case 'turnResumed':
      return restarted(v, { attempt: e.attempt, content: e.reply }, out);
    case 'contextCompacted': {
      const { method, trigger, upToSeq, tokensBefore, tokensAfter } = e;
      out.push({
        type: EventType.CUSTOM,
        name: 'agentd.contextCompacted',
        value: { method, trigger, upToSeq, tokensBefore, tokensAfter },
      });
      return;
    }
    case 'response': {
      const rest = unsent(v, e.content);
      if (rest !== '') closeText(v, out);
      text(v, rest, out);
      return finished(v, out, { type: 'success' });
    }
    case 'turnFailed':
      return failed(v, e, out);
    default:
      return;
  }
}

/**
 * The turn waits: the run ends on the questions it names (`interrupted`), unless it names one this run answers (it
 * waited before the run's answers took effect) or one the run has not seen asked.
 */
function awaited(view: RunView, { data }: Extract<TurnStep, { kind: 'awaiting' }>): { view: RunView; events: Event[] } {
  const ids = data.questionIds;
  const named = view.open.filter((q) => ids.includes(q.id));
  const stale = data.turnId !== view.turnId || ids.some((id) => view.answering.includes(id));
  return stale || named.length < ids.length ? { view, events: [] } : interrupted(view, named);
}

/** One step of the turn folded into the run: the view after it and the events it sends. */
export function foldStep(view: RunView, step: TurnStep): { view: RunView; events: Event[] } {
  if (!view.ended && step.kind === 'awaiting') return awaited(view, step);
  if (view.ended || step.kind === 'awaiting' || turnOfStep(step) !== view.turnId) return { view, events: [] };
  const v = { ...view };
  const events: Event[] = [];
  if (step.kind === 'fact') onFact(v, step.stored, events);
  else onTransient(v, step.frame, events);
  return { view: v, events };
}

/**
 * The run ends waiting on `questions` (the turn's open ones): an interrupt outcome of those for a person, else
 * (only client tool calls wait) a success whose `pendingToolCallIds` name them (AG-UI 1.0).
 */
export function interrupted(view: RunView, questions: readonly Question[]): { view: RunView; events: Event[] } {
  const v = { ...view };
  const events: Event[] = [];
  const interrupts = questions.filter((q) => q.kind !== 'clientTool');
  finished(
    v,
    events,
    interrupts.length > 0
      ? { type: 'interrupt', interrupts: interrupts.map(interruptOf) }
      : { type: 'success', pendingToolCallIds: questions.map((q) => q.callId) },
  );
  return { view: v, events };
}
