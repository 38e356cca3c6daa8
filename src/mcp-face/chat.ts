/**
 * `chat_with_agent { message, sessionId? }`: one turn (no sessionId: a fresh unnamed session, removed after the
 * reply, or once idle). Task-augmented (`task`, a 2025-era request): the turn's task at once (tasks.ts), its
 * unnamed session kept until idle. With a `progressToken`, one `notifications/progress` per chunk, all before the result.
 * A turn waiting for a person asks a caller that declared form elicitation and `mayApprove` (approval-rounds.ts,
 * elicited-questions.ts); a `requestState` of a session it cannot see is InvalidParams, as are bad arguments.
 * A failed turn is an `isError` result.
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type InputRequiredResult,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { SessionAccess } from '../auth/index.ts';
import { toErrorBody } from '../errors/index.ts';
import { unnamedSessionId } from '../session-id.ts';
import type { ApprovalRounds } from './approval-rounds.ts';
import { askQuestions } from './elicited-questions.ts';
import type { ServerFaceDeps, ServerOptions } from './face-types.ts';
import { chatInput, hopsIn, parseArgs, text } from './own-tools.ts';
import { isAdmin } from './questions.ts';
import { declaresTasks } from './task-extension.ts';
import type { Tasks } from './tasks.ts';

interface ChatFace {
  deps: ServerFaceDeps;
  approvalRounds: ApprovalRounds;
  tasks: Tasks;
}

/** The call's parameters as the face reads them. */
export interface ChatParams {
  arguments?: unknown;
  _meta?: Record<string, unknown> | undefined;
  /** Task augmentation (2025-11-25). */
  task?: unknown;
}

/** Whether the caller may be asked the turn's questions: it may approve, and declared form elicitation. */
export function mayAsk(server: Server, options: ServerOptions): boolean {
  const { persistent = false, mayApprove = persistent } = options;
  return mayApprove && (options.outOfBand !== undefined || server.getClientCapabilities()?.elicitation !== undefined);
}

export async function chat(
  face: ChatFace,
  { arguments: args, _meta: meta, task }: ChatParams,
  ctx: ServerContext,
  sessions: SessionAccess,
  server: Server,
  options: ServerOptions,
): Promise<CallToolResult | InputRequiredResult> {
  const { deps, approvalRounds } = face;
  const { bus } = deps;
  const { signal } = ctx.mcpReq;
  const { message, sessionId: requested } = parseArgs(chatInput, args);
  const hops = hopsIn(meta);
  if (hops > deps.maxHops) {
    return text(
      `Refused: this call has passed through ${hops} agents; the limit is ${deps.maxHops} (server.mcp.maxHops).`,
      true,
    );
  }
  const modern = ctx.mcpReq.envelope !== undefined;
  // A 2025-era client asks for a task; on the extension's wire the server chooses one for a client that declared it.
  if (modern ? declaresTasks(ctx) && ctx.mcpReq.inputResponses === undefined : task !== undefined) {
    const unnamed = requested === undefined;
    return face.tasks
      .create(
        {
          sessionId: sessions.key(requested ?? unnamedSessionId(deps.ids())),
          content: message,
          hops,
          ...(sessions.quota && { quota: sessions.quota }),
          ...(unnamed && { unnamed }),
        },
        modern,
      )
      .catch((err: unknown) => text(`The agent failed: ${toErrorBody(err).message}`, true));
  }
  const asksClient = mayAsk(server, options);
  const rounds = modern && asksClient ? approvalRounds : undefined;
  const state = rounds?.stateOf(ctx);
  if (state && !sessions.sees(state.sessionId))
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid or expired requestState');
  const sessionId = state?.sessionId ?? sessions.key(requested ?? unnamedSessionId(deps.ids()));
  const correlationId = state?.correlationId ?? deps.ids();
  const temporary = state?.temporary ?? requested === undefined;
  const progressToken = meta?.progressToken as string | number | undefined;
  let progress = 0;
  // Chained, and awaited before the result.
  let notified = Promise.resolve();
  const offChunk =
    progressToken === undefined
      ? undefined
      : bus.on('agent.chunk', (e) => {
          if (e.correlationId !== correlationId) return;
          const params = { progressToken, progress: ++progress, message: e.payload.content };
          notified = notified
            .then(() => ctx.mcpReq.notify({ method: 'notifications/progress', params }))
            .catch(() => undefined);
        });
  const offQuestions =
    !modern && asksClient
      ? askQuestions(deps, ctx, (e) => e.correlationId === correlationId, sessionId, options)
      : undefined;
  const onAbort = () => void bus.execute('agent.cancel', { sessionId }).catch(() => undefined);
  signal.addEventListener('abort', onAbort, { once: true });
  let detached = false;
  try {
    const answered = state && rounds ? await rounds.answer(state, ctx, isAdmin(options)) : [];
    const reply = state
      ? (
          await deps.waiter.rejoin({
            correlationId,
            sessionId,
            ...(state.turnId !== undefined && { turnId: state.turnId }),
          })
        ).reply
      : deps.waiter.ask(
          {
            sessionId,
            content: message,
            hops,
            ...(sessions.quota && { quota: sessions.quota }),
            ...(temporary && { unnamed: true }),
          },
          rounds ? { correlationId, detachable: true } : { correlationId, signal },
        );
    const turnId = () => state?.turnId ?? deps.waiter.turnOf(correlationId);
    const waiting = rounds && (await rounds.next({ sessionId, correlationId, turnId }, reply, answered));
    if (rounds && waiting) {
      detached = true; // the turn goes on waiting; the client's retry follows it
      return await rounds.ask(waiting, {
        sessionId,
        correlationId,
        temporary,
        ...(waiting[0] && { turnId: waiting[0].question.turnId }),
      });
    }
    const response = await reply;
    await notified;
    return text(response.content);
  } catch (err) {
    return text(`The agent failed: ${toErrorBody(err).message}`, true);
  } finally {
    offChunk?.();
    offQuestions?.();
    signal.removeEventListener('abort', onAbort);
    if (temporary && !detached) await bus.execute('agent.deleteSession', { sessionId }).catch(() => undefined);
  }
}
