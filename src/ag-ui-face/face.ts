/**
 * The agent served over AG-UI (docs/ag-ui.md): a run is a turn of the caller's session (`threadId` through
 * `ctx.sessions.key`; the turn's id is the `runId`), followed through the turn follower and mapped by run-view.ts.
 * - `run(body, ctx)`: a malformed input throws its AppError (the endpoint answers 400); a run refused once the
 *   input is read (`plan`) is one `RUN_ERROR`. A client that leaves ends its stream only: the turn goes on.
 * - A run reads the thread (`agent.thread`: the facts since its last reset), never the whole log: a known
 *   `runId`, a question asked, the history compared are those of the thread.
 * - A run ends on an interrupt when its turn says it waits (the `awaiting` step), naming every question the turn
 *   holds; one that names a question the run answers itself came before those answers took effect.
 * - A run that carries an MCP App's request (`forwardedProps.__proxiedMCPRequest`, app-requests.ts) is no turn: it
 *   answers the request in its `RUN_FINISHED` result, or ends with `RUN_ERROR` (a failed `tools/call` is answered in
 *   band).
 */
import { EventType, type Event, type Message, type ResumeEntry, type RunAgentInput } from '@ag-ui/core';
import {
  pipeEvents,
  type AgentCommands,
  type AgentEvents,
  type AnswerInput,
  type Question,
  type SessionStoredEvent,
  type TurnFollower,
} from '../agent/index.ts';
import { answeredVia, type Principal, type SessionAccess } from '../auth/index.ts';
import type { AgUiConfig } from '../config/schema.ts';
import type { ClientTool } from '../conversation/session-event-fields.ts';
import type { Bus } from '../bus/index.ts';
import type { McpEvents } from '../tools/messages.ts';
import type { Clock } from '../clock.ts';
import { AppError } from '../errors/index.ts';
import type { SessionKey } from '../session-id.ts';
import { newUserMessage, readRunInput } from './input.ts';
import { clientResults } from './client-tools.ts';
import { clientToolsOf } from '../http/client-tools.ts';
import { appRequestRun, proxiedRequestOf, type CallAppTool } from './app-requests.ts';
import { answerOf, checkResume } from './interrupts.ts';
import { runError, toolProgress } from './run-events.ts';
import { foldStep, runStarted, runView, type RunView } from './run-view.ts';
import { askedAt, diverges, questionsAsked, threadMessages } from './thread.ts';

export interface AgUiFaceDeps {
  /** The agent's commands; the tool servers' live progress of a run's calls. */
  bus: Pick<Bus<AgentCommands, AgentEvents & McpEvents>, 'execute' | 'on'>;
  follower: TurnFollower;
  clock: Clock;
  /** Whether a principal may answer questions (the `approve` route scope of server.auth). */
  mayApprove: (principal: Principal) => boolean;
  /** Who may declare tools the client runs (`agUi.clientTools`). */
  clientTools: AgUiConfig['clientTools'];
  /** An MCP App's tool call (the bus command `agent.appToolCall`: the tool policy and approvals apply). */
  callAppTool: CallAppTool;
}

export interface AgUiCallContext {
  sessions: SessionAccess;
  principal: Principal;
  /** Aborts when the client goes away. */
  signal: AbortSignal;
}

/** What a run does to the thread before it follows its turn. */
interface Plan {
  turnId: string;
  since: number;
  /** The questions of the turn open when the run began (those asked before `since` are not followed again). */
  open: Question[];
  snapshot: Message[] | undefined;
  send?: string;
  clientTools?: ClientTool[];
  answers: { q: Question; answer: AnswerInput }[];
}

const openInterrupts = (interrupts: Question[]) =>
  new AppError('INVALID_REQUEST', 'The thread waits for its interrupts: resume them first', {
    reason: 'open_interrupts',
    interruptIds: interrupts.map((q) => q.id),
  });

/** Re-run a known `runId`, resume a waiting turn, or send a new message; throws the AppError that refuses it. */
function plan(
  deps: AgUiFaceDeps,
  input: RunAgentInput,
  facts: SessionStoredEvent[],
  open: Question[],
  principal: Principal,
): Plan {
  const { runId, messages } = input;
  const resume: ResumeEntry[] = input.resume ?? [];
  const clientTools = clientToolsOf(input.tools, principal, deps.clientTools);
  const asked = questionsAsked(facts);
  const interrupts = open.filter((q) => q.kind !== 'clientTool');
  const results = clientResults(messages, open, asked);
  if ((resume.length > 0 || results.length > 0) && !deps.mayApprove(principal))
    throw new AppError('FORBIDDEN', 'Answering an interrupt or a tool call needs the approve scope', {
      scope: 'approve',
    });
  // The run goes on with the turn its answers belong to, after the facts that asked the questions they close.
  const resumed = (answers: { q: Question; answer: AnswerInput }[]): Plan => {
    const ids = new Set(answers.map((a) => a.q.id));
    const since = askedAt(facts, ids);
    const snapshot = diverges(messages, facts) ? threadMessages(facts) : undefined;
    const turnId = answers[0]!.q.turnId;
    return { turnId, since, open: open.filter((q) => q.turnId === turnId), snapshot, answers };
  };
  if (resume.length > 0) {
    checkResume(resume, interrupts, asked, deps.clock.now());
    const answers = resume.map((entry) => {
      const q = open.find((o) => o.id === entry.interruptId)!; // checkResume: every entry names an open one
      return { q, answer: answerOf(q, entry) };
    });
    return resumed([...answers, ...results]);
  }
  if (results.length > 0) {
    if (interrupts.length > 0) throw openInterrupts(interrupts);
    const missing = open.filter((q) => !results.some((r) => r.q.id === q.id)).map((q) => q.callId);
    if (missing.length > 0)
      throw new AppError(
        'INVALID_REQUEST',
        `The thread waits for the results of ${missing.length} more tool call(s): send a tool message for each (${missing.join(', ')})`,
        { reason: 'pending_tool_calls', toolCallIds: missing },
      );
    return resumed(results);
  }
  if (facts.some(({ event: e }) => 'turnId' in e && e.turnId === runId))
    return { turnId: runId, since: 0, open: [], snapshot: threadMessages(facts, { before: runId }), answers: [] };
  if (interrupts.length > 0) throw openInterrupts(interrupts);
  if (open.length > 0)
    throw new AppError(
      'INVALID_REQUEST',
      'The thread waits for the results of the tool calls its client runs: send them as tool messages first',
      { reason: 'pending_tool_calls', toolCallIds: open.map((q) => q.callId) },
    );
  const message = newUserMessage(messages);
  if (!message)
    throw new AppError('MISSING_FIELD', 'A new run needs a user message last in messages', { field: 'messages' });
  const prior = messages.slice(0, -1);
  const snapshot = diverges(prior, facts)
    ? [...threadMessages(facts), { id: `${runId}-user`, role: 'user' as const, content: message.text }]
    : undefined;
  const sent = { send: message.text, ...(clientTools && { clientTools }) };
  return { turnId: runId, since: 0, open: [], snapshot, ...sent, answers: [] };
}

/** The run of an MCP App's request, when the input carries one (app-requests.ts). */
function appRun(deps: AgUiFaceDeps, input: RunAgentInput, key: SessionKey, principal: Principal) {
  const request = proxiedRequestOf(input.forwardedProps);
  if (!request) return undefined;
  const toolApp = async (sessionId: SessionKey, callId: string) =>
    (await deps.bus.execute('agent.toolApp', { sessionId, callId })).app;
  return appRequestRun(input, request, key, principal, { toolApp, callAppTool: deps.callAppTool });
}

export function createAgUiFace(deps: AgUiFaceDeps) {
  const { bus } = deps;
  const on = (key: SessionKey) => ({ sessionId: key });

  /** Follows the planned turn into `push` until its run ends (on an interrupt: `awaiting`); answers what stops it. */
  async function follow(
    key: SessionKey,
    input: RunAgentInput,
    p: Plan,
    ctx: AgUiCallContext,
    push: (e: Event) => void,
    end: () => void,
  ): Promise<() => void> {
    const held = { open: p.open, answering: p.answers.map((a) => a.q.id) };
    let view: RunView = runView(input.threadId, input.runId, p.turnId, p.since, held);
    const emit = (next: { view: RunView; events: Event[] }) => {
      view = next.view;
      next.events.forEach(push);
      if (view.ended) end();
    };
    push(runStarted(view));
    if (p.snapshot) push({ type: EventType.MESSAGES_SNAPSHOT, messages: p.snapshot });
    // Progress is no frame of the turn's log: it reaches the run live, between its call's start and result.
    const offProgress = bus.on('mcp.toolProgress', ({ payload }) => {
      if (payload.sessionId === key && payload.turnId === p.turnId && !view.ended) push(toolProgress(payload));
    });
    const watch = deps.follower.watch(key);
    try {
      await watch.follow(p.turnId, (step) => emit(foldStep(view, step)));
      if (p.send !== undefined)
        await bus.execute(
          'agent.sendMessage',
          {
            sessionId: key,
            turnId: input.runId,
            content: p.send,
            ...(p.clientTools && { clientTools: p.clientTools }),
            ...(ctx.sessions.quota && { quota: ctx.sessions.quota }),
          },
          { correlationId: `ag-ui:${input.runId}` },
        );
      for (const { q, answer } of p.answers)
        await bus.execute('agent.answer', { sessionId: key, id: q.id, answer, ...answeredVia('ag-ui', ctx.principal) });
    } catch (err) {
      if (!view.ended) emit({ view: { ...view, ended: true }, events: [runError(err)] });
    }
    return () => (offProgress(), watch.close());
  }

  return {
    async run(body: unknown, ctx: AgUiCallContext): Promise<AsyncIterable<Event>> {
      const input = await readRunInput(body);
      const key = ctx.sessions.key(input.threadId);
      const app = appRun(deps, input, key, ctx.principal);
      return (
        app ??
        pipeEvents<Event>(ctx.signal, async (push, end) => {
          try {
            const { facts } = await bus.execute('agent.thread', on(key));
            const open = await bus.execute('agent.questions', on(key));
            return await follow(key, input, plan(deps, input, facts, open, ctx.principal), ctx, push, end);
          } catch (err) {
            push(runError(err));
            end();
            return () => undefined;
          }
        })
      );
    },
  };
}
export type AgUiFace = ReturnType<typeof createAgUiFace>;
