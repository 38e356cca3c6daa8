/**
 * An MCP App's calls of tools (`agent.appToolCall`, docs/tool-servers.md "MCP Apps"): the app rendered for a session's
 * tool call calls a tool of the same server, and the call runs as a turn of that session whose one step is the app's
 * call (session/app-step.ts), under the tool policy and its approvals like a model's call.
 *
 * Contracts:
 * - `agent.appToolCall` runs anywhere (it reads the log and follows the turn); it answers APP_NOT_FOUND when the
 *   session's log has no result of `appCallId` with an app kept (none, or a note), and FORBIDDEN `details.reason:
 *   "app_tool"` unless `name` is a tool of the app's own server whose `_meta.ui.visibility` includes "app" (absent: it
 *   does). Otherwise it queues the call at the session's owner (`agent.queueAppCall`), follows its turn, and answers
 *   once the call settled: `result` is the call's MCP CallToolResult; a denied, expired, failed or interrupted call is a
 *   result with `isError: true` and a text saying why, and so is a turn that ended without its result (cancelled,
 *   reset). No answer within `timeoutMs` rejects with AGENT_ERROR `details.reason: "timeout"` (the call goes on).
 * - `agent.queueAppCall` (session-scoped, answered at once) queues the call as the session's next turn (decide.ts).
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
import type { AgentCommands, AppCallResult } from './messages.ts';
import type { SessionRegistry } from './session-registry.ts';

export interface AppCallDeps {
  bus: AgentBus;
  store: EventStore<SessionEvent>;
  ids: IdSource;
  log: Logger;
  withSession: SessionRegistry['withSession'];
  /** Follows the call's turn (the service's follower, made after the agent, hence a getter; default: one of this bus). */
  follower?: () => Pick<TurnFollower, 'watch'>;
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

/** The app kept with the session's call `appCallId`: its result's server, or undefined (APP_NOT_FOUND). */
async function appOf(store: EventStore<SessionEvent>, sessionId: string, appCallId: string) {
  const stored = await store.read(sessionId, 0);
  for (let i = stored.length - 1; i >= 0; i--) {
    const e = stored[i]!.event;
    if (e.type === 'toolResult' && e.callId === appCallId)
      return e.app && !('note' in e.app) ? { serverId: e.serverId } : undefined;
  }
  return undefined;
}

/** Registers both handlers; returns their unregister functions. */
export function registerAppCalls(deps: AppCallDeps): (() => void)[] {
  const { bus, store, ids, log } = deps;
  const timeoutMs = deps.timeoutMs ?? DEFAULT_APP_CALL_TIMEOUT_MS;
  let own: Pick<TurnFollower, 'watch'> | undefined;
  const follower = deps.follower ?? (() => (own ??= createTurnFollower({ bus, store })));

  async function checkedTool({ sessionId, appCallId, name }: AgentCommands['agent.appToolCall']['payload']) {
    const app = await appOf(store, sessionId, appCallId);
    if (!app)
      throw new AppError('APP_NOT_FOUND', `No app is kept with call "${appCallId}" of this session`, {
        callId: appCallId,
      });
    const tools = await bus.execute('mcp.modelTools', { withAppOnly: true });
    const tool = tools.find((t) => t.serverId === app.serverId && t.toolName === name);
    if (!tool || !appMayCall(tool))
      throw new AppError('FORBIDDEN', `The app may not call "${name}": not a tool of its server that apps may call`, {
        reason: 'app_tool',
        serverId: app.serverId,
        name,
      });
    return tool;
  }

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
    bus.handle('agent.queueAppCall', ({ payload: { sessionId, turnId, app }, correlationId }) =>
      deps.withSession(sessionId, (s) => s.appCall({ turnId, correlationId, content: '', app })),
    ),
    bus.handle('agent.appToolCall', async ({ payload, correlationId }) => {
      const { sessionId, appCallId, args } = payload;
      const tool = await checkedTool(payload);
      const callId = ids();
      const turnId = ids();
      log.info({ sessionId, appCallId, callId, tool: tool.name, principal: payload.principal }, 'an app calls a tool');
      const call = settled(sessionId, turnId, callId);
      call.result.catch(() => undefined); // awaited below, or the queueing's error answers
      try {
        const app = { appCallId, call: { callId, tool, args } };
        await bus.execute('agent.queueAppCall', { sessionId, turnId, app }, { correlationId });
      } catch (err) {
        call.cancel(err);
        throw err;
      }
      call.follow();
      return { callId, result: await call.result };
    }),
  ];
}
