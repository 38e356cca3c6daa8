/**
 * Answering the calls of tools the client runs (questions of kind `clientTool`, docs/approvals.md) with the client's
 * handlers. An answerer runs each call it is offered once (a call offered again, by a replayed frame or the pending
 * list read after a reconnect, reuses its result) and POSTs the result (`POST /api/sessions/{id}/client-tools/
 * {callId}` `{ content, error? }`) until the server has it: an answer that got no reply, or 429/5xx, is sent again
 * after the streams' doubling wait (`reconnect`), at most `reconnect.maxAttempts` times; one the server says is
 * given already (409) or gone (404: timed out, cancelled) is done. A handler's throw answers `{ content: '', error }`,
 * and so does a call of a tool it has no handler for. Any other refusal (401, 403, 400) goes to `fail`.
 * `serveClientTools` follows a session and answers its calls; `chat` answers its own turn's (chat.ts).
 */
import type { Api } from './api.ts';
import { AgentdError, inputError } from './errors.ts';
import { backoff, followFrames, streamStop, type StreamContext } from './follow.ts';
import { sleep } from './http.ts';
import type { QuestionsOptions } from './questions.ts';

/** A tool the client runs: its arguments in, its result as text out (a throw is the call's error). */
export type ClientToolHandler = (args: unknown) => string | Promise<string>;

/** The client's context: REST, streams, and the turns its chats answer the client tool calls of themselves. */
export type ToolContext = StreamContext & { api: Api; chatTurns: Set<string> };

/** A call waiting for the client's result, as its `clientToolRequested` frame or the pending list has it. */
export interface ClientToolCall {
  callId: string;
  toolName: string;
  turnId: string;
  args: unknown;
}

export interface AnswererOptions {
  signal: AbortSignal;
  owner?: string | undefined;
  /** Which calls this answerer answers (those of other turns are someone else's). */
  mine: (call: ClientToolCall) => boolean;
  /** A refusal that answering again cannot mend; the answerer stops trying that call. */
  fail: (err: unknown) => void;
}

export interface ToolAnswerer {
  /** Runs and answers the call, unless it is answered or being answered. */
  offer(call: ClientToolCall): void;
  /** Reads the session's waiting calls and offers them: an answer lost with a connection is sent again. */
  recheck(): void;
}

type Reply = { content: string; error?: string };
type Call = { reply: Promise<Reply>; state: 'posting' | 'lost' | 'done' };

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));
const retryable = (err: unknown): boolean =>
  err instanceof AgentdError && (err.status === 0 || err.status === 429 || err.status >= 500);
const settled = (err: unknown): boolean => err instanceof AgentdError && (err.status === 409 || err.status === 404);

/** The call a `clientToolRequested` frame asks (undefined for a frame without one). */
export function callOfFrame(frame: { event: string; data: Record<string, unknown> }): ClientToolCall | undefined {
  if (frame.event !== 'clientToolRequested') return undefined;
  const { callId, toolName, turnId, args } = frame.data;
  if (typeof callId !== 'string' || typeof toolName !== 'string' || typeof turnId !== 'string') return undefined;
  return { callId, toolName, turnId, args };
}

async function runTool(handlers: Record<string, ClientToolHandler>, call: ClientToolCall): Promise<Reply> {
  const handler = Object.hasOwn(handlers, call.toolName) ? handlers[call.toolName] : undefined;
  if (!handler) return { content: '', error: `No tool "${call.toolName}" is run by this client` };
  try {
    return { content: String(await handler(call.args)) };
  } catch (err) {
    return { content: '', error: messageOf(err) };
  }
}

export function createToolAnswerer(
  ctx: ToolContext,
  sessionId: string,
  handlers: Record<string, ClientToolHandler>,
  options: AnswererOptions,
): ToolAnswerer {
  const { signal, fail } = options;
  const owner = options.owner === undefined ? {} : { query: { owner: options.owner } };
  const calls = new Map<string, Call>();

  async function post(callId: string, call: Call): Promise<void> {
    const body = await call.reply;
    for (let attempt = 1; !signal.aborted; attempt++) {
      try {
        await ctx.api.answerClientTool({ sessionId, callId, body, ...owner }, { signal });
        call.state = 'done';
        return;
      } catch (err) {
        if (signal.aborted) return;
        if (settled(err)) return void (call.state = 'done');
        if (!retryable(err)) return void ((call.state = 'done'), fail(err));
        if (attempt > (ctx.options.reconnect?.maxAttempts ?? 10)) return void (call.state = 'lost');
        await sleep(backoff(ctx.options, attempt), signal).catch(() => undefined);
      }
    }
  }

  const answerer: ToolAnswerer = {
    offer(seen) {
      if (signal.aborted || !options.mine(seen)) return;
      const known = calls.get(seen.callId);
      if (known && known.state !== 'lost') return;
      const call = known ?? { reply: runTool(handlers, seen), state: 'posting' };
      call.state = 'posting';
      calls.set(seen.callId, call);
      post(seen.callId, call).catch(fail);
    },
    recheck() {
      ctx.api
        .listClientTools({ sessionId, ...owner }, { signal })
        .then(({ clientTools }) => clientTools.forEach((c) => answerer.offer(c)))
        .catch((err: unknown) => {
          // A session with no log yet waits on nothing; one unreachable now is read again after the reconnect.
          const quiet = signal.aborted || retryable(err) || (err instanceof AgentdError && err.status === 404);
          if (!quiet) fail(err);
        });
    },
  };
  return answerer;
}

/**
 * Answers the session's client tool calls with `handlers` until aborted, except those of turns a chat of this client
 * answers itself: those waiting now (read each time its subscription is in place), then each as it is asked.
 */
export async function serveClientTools(
  ctx: ToolContext,
  sessionId: string,
  handlers: Record<string, ClientToolHandler>,
  options: QuestionsOptions = {},
): Promise<void> {
  if (typeof handlers !== 'object' || handlers === null)
    throw inputError('serveClientTools: handlers must be an object');
  const stop = streamStop(options.signal);
  const answerer = createToolAnswerer(ctx, sessionId, handlers, {
    signal: stop.signal,
    owner: options.owner,
    mine: (call) => !ctx.chatTurns.has(call.turnId),
    fail: stop.fail,
  });
  const follow = { signal: stop.signal, ...(options.owner !== undefined && { owner: options.owner }) };
  const onReady = () => void answerer.recheck();
  try {
    for await (const frame of followFrames(ctx, sessionId, follow, { onReady })) {
      const call = callOfFrame(frame);
      if (call) answerer.offer(call);
    }
  } catch (err) {
    throw stop.failure ?? err;
  } finally {
    stop.end();
  }
}
