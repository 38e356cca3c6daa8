/**
 * An MCP App's calls of tools (`agent.appToolCall`, docs/tool-servers.md "MCP Apps"): the app rendered for a session's
 * tool call calls a tool of the same server, and the call runs as a turn of that session whose one step is the app's
 * call (session/app-step.ts), under the tool policy and its approvals like a model's call.
 *
 * Contracts:
 * - `agent.appToolCall` runs anywhere (it reads the catalogue and follows the turn); the session's owner decides the
 *   call against the session's state, never its log (`agent.queueAppCall`, session/decide.ts): APP_NOT_FOUND when no
 *   app is kept with `appCallId` (no result of it, or a note), FORBIDDEN `details.reason: "app_tool"` unless `name` is
 *   a tool of the app's own server whose `_meta.ui.visibility` includes "app" (absent: it does). Otherwise the call is
 *   queued, its turn followed, and the caller answered once the call settled: `result` is the call's MCP CallToolResult; a denied, expired, failed or interrupted call is a
 *   result with `isError: true` and a text saying why, and so is a turn that ended without its result (cancelled,
 *   reset). No answer within `timeoutMs` rejects with AGENT_ERROR `details.reason: "timeout"` (the call goes on).
 * - `agent.queueAppCall` (session-scoped, answered at once) decides and queues the call as the session's next turn.
 */
import { AppError } from '../errors/index.ts';
import type { IdSource } from '../clock.ts';
import type { SessionEvent, SessionEventOf } from '../conversation/session-events.ts';
import type { ModelTool } from '../conversation/tool-shapes.ts';
import type { Logger } from '../log/index.ts';
import type { EventStore } from '../store/types.ts';
import type { AgentBus } from './command-handlers.ts';
import { createTurnFollower, type TurnFollower } from './follow/follower.ts';
import type { TurnStep } from './follow/steps.ts';
import type { AppCallResult } from './messages.ts';
import type { SessionRegistry } from './session-registry.ts';

export interface AppCallDeps {
  bus: AgentBus;
  store: EventStore<SessionEvent>;
  ids: IdSource;
  log: Logger;
  withSession: SessionRegistry['withSession'];
  /** Follows the call's turn (the service's follower; default: one of this bus, made at the first call). */
  follower?: Pick<TurnFollower, 'watch'>;
  /** How long `agent.appToolCall` waits for the call to settle (default DEFAULT_APP_CALL_TIMEOUT_MS). */
  timeoutMs?: number;
}

export const DEFAULT_APP_CALL_TIMEOUT_MS = 120_000;

/** Whether the tool's `_meta.ui.visibility` lets an app call it (absent: the model and apps may). */
export const appMayCall = (tool: Pick<ModelTool, 'ui'>): boolean => {
  const visibility = tool.ui?.visibility;
  return !Array.isArray(visibility) || visibility.includes('app');
};

/** A stored result as the MCP CallToolResult the app is answered with (a failure's text as its one content). */
export function callToolResultOf(e: SessionEventOf<'toolResult'>): AppCallResult {
  const r = e.result as { content?: unknown; structuredContent?: unknown } | undefined;
  const failed = e.success ? {} : { isError: true };
  if (r && typeof r === 'object' && Array.isArray(r.content)) {
    const structured = r.structuredContent;
    return {
      content: r.content as unknown[],
      ...(structured !== null && typeof structured === 'object' && { structuredContent: structured }),
      ...failed,
    } as AppCallResult;
  }
  return { content: [{ type: 'text', text: e.text }], ...failed };
}

/** The failed result of a call whose turn ended without one. */
const endedWithout = (why: string): AppCallResult => ({
  content: [{ type: 'text', text: `The app's call did not run to its end: ${why}` }],
  isError: true,
});

/** Registers both handlers; returns their unregister functions. */
export function registerAppCalls(deps: AppCallDeps): (() => void)[] {
  const { bus, store, ids, log } = deps;
  const timeoutMs = deps.timeoutMs ?? DEFAULT_APP_CALL_TIMEOUT_MS;
  let given = deps.follower;
  const follower = () => (given ??= createTurnFollower({ bus, store }));

  /** The catalogue's tools named `name` that apps may call (their servers' own names; the session picks its app's). */
  const callable = async (name: string) =>
    (await bus.execute('mcp.modelTools', { withAppOnly: true })).filter((t) => t.toolName === name && appMayCall(t));

  /**
   * Watches the session for turn `turnId` (before it is queued, so nothing is missed): `follow()` then hands its steps on
   * until the call's result, or the turn's end without one; `result` settles once, and the watch closes with it.
   */
  function settled(sessionId: string, turnId: string, callId: string) {
    const watch = follower().watch(sessionId);
    let resolve!: (r: AppCallResult) => void;
    let reject!: (err: unknown) => void;
    const result = new Promise<AppCallResult>((res, rej) => ((resolve = res), (reject = rej)));
    const timer = setTimeout(() => {
      const details = { reason: 'timeout', callId };
      reject(new AppError('AGENT_ERROR', `The app's call did not settle within ${timeoutMs} ms`, details));
    }, timeoutMs);
    const done = () => (clearTimeout(timer), watch.close());
    void result.then(done, done);
    const onStep = (step: TurnStep) => {
      if (step.kind === 'frame' && step.frame.event === 'error') resolve(endedWithout(step.frame.data.message));
      if (step.kind !== 'fact') return;
      const e = step.stored.event;
      if (e.type === 'toolResult' && e.callId === callId) resolve(callToolResultOf(e));
      if (e.type === 'turnFailed') resolve(endedWithout(e.message));
    };
    return {
      result,
      follow: () => void watch.follow(turnId, onStep).catch(reject),
      cancel: (err: unknown) => reject(err),
    };
  }

  return [
    bus.handle('agent.queueAppCall', ({ payload: { sessionId, request }, correlationId }) =>
      deps.withSession(sessionId, (s) => s.appCall(request, correlationId), true),
    ),
    bus.handle('agent.appToolCall', async ({ payload, correlationId }) => {
      const { sessionId, appCallId, name, args } = payload;
      const tools = await callable(name);
      const callId = ids();
      const turnId = ids();
      const call = settled(sessionId, turnId, callId);
      call.result.catch(() => undefined); // awaited below, or the queueing's error answers
      try {
        const request = { turnId, appCallId, callId, name, args, tools };
        await bus.execute('agent.queueAppCall', { sessionId, request }, { correlationId });
        log.info({ sessionId, appCallId, callId, tool: name, principal: payload.principal }, 'an app calls a tool');
      } catch (err) {
        call.cancel(err);
        throw err;
      }
      call.follow();
      return { callId, result: await call.result };
    }),
  ];
}
