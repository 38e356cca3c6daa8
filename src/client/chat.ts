/**
 * `chat`: one turn as an async iterator. It follows the session (followFrames: live, resumed by seq after a drop), and
 * once subscribed sends the message over REST with a turn id of its own, so a retry after a lost answer runs nothing
 * twice (the server answers a known turn id as a duplicate). It yields that turn's frames and
 * ends after its `response`, or throws its `error` as an AgentdError. An abort ends it too, and with `cancelTurn`
 * cancels the turn on the server.
 * With `tools`, it answers the calls of them its own turn makes (and only those: another turn of the session, another
 * script's chat, may declare a tool of the same name) from the `clientToolRequested` frames it follows, on the same
 * connection; each subscription also reads the calls still waiting, so an answer lost with a dropped connection is
 * sent again (client-tools.ts: each call run once).
 */
import { errorOfFrame, inputError } from './errors.ts';
import { followFrames, streamStop } from './follow.ts';
import type { Frame } from './frames.ts';
import { checkKeys } from './options.ts';
import { callOfFrame, createToolAnswerer, type ClientToolHandler, type ToolContext } from './client-tools.ts';
import type { RouteArgs } from './api.ts';

type MessageBody = RouteArgs<'message'>['body'];

/** A tool the client runs: declared with the message, its calls answered by `run` while the chat runs. */
export interface LocalTool {
  description?: string;
  /** A JSON Schema object for its arguments (default: none). */
  parameters?: Record<string, unknown>;
  /** The call's arguments in, its result as text out (a throw answers the call as failed). */
  run: ClientToolHandler;
}

export interface ChatOptions extends Omit<MessageBody, 'message' | 'sessionId' | 'tools'> {
  signal?: AbortSignal;
  /** On abort, also cancel the turn on the server (default false: it runs on, and `follow` can pick it up). */
  cancelTurn?: boolean;
  /** Tools the client runs, by name, offered to the model for this turn. */
  tools?: Record<string, LocalTool>;
}

const CHAT_KEYS = ['signal', 'cancelTurn', 'turnId', 'imageData', 'resources', 'prompt', 'tools'];

/** The declarations and the handlers of `tools` (refused before anything is sent when one has no `run`). */
function localTools(tools: Record<string, LocalTool> | undefined) {
  if (tools === undefined) return undefined;
  if (typeof tools !== 'object' || tools === null) throw inputError('chat: tools must be an object of tools by name');
  const entries = Object.entries(tools);
  for (const [name, t] of entries)
    if (typeof t?.run !== 'function')
      throw inputError(`chat: tool "${name}" needs a run function`, { field: `tools.${name}.run` });
  return {
    declared: entries.map(([name, t]) => ({
      name,
      ...(t.description !== undefined && { description: t.description }),
      ...(t.parameters !== undefined && { parameters: t.parameters }),
    })),
    handlers: Object.fromEntries(entries.map(([name, t]) => [name, t.run])),
  };
}

const newTurnId = (): string =>
  typeof crypto !== 'undefined' && 'randomUUID' in crypto
    ? crypto.randomUUID()
    : `t-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;

export async function* chat(
  ctx: ToolContext,
  sessionId: string,
  message: string,
  options: ChatOptions = {},
): AsyncGenerator<Frame> {
  if (typeof sessionId !== 'string' || sessionId === '') throw inputError('chat: sessionId must be a non-empty string');
  if (typeof message !== 'string') throw inputError(`chat: message must be a string, not ${typeof message}`);
  checkKeys('chat option', options, CHAT_KEYS);
  const { signal, cancelTurn, turnId = newTurnId(), tools, ...fields } = options;
  const local = localTools(tools);
  const stop = streamStop(signal);
  const { fail } = stop;
  const mine = ({ turnId: of }: { turnId: string }) => of === turnId;
  const answerer = local && createToolAnswerer(ctx, sessionId, local.handlers, { signal: stop.signal, mine, fail });
  if (answerer) ctx.chatTurns.add(turnId);
  const send = () => {
    const body = { ...fields, message, sessionId, turnId, ...(local && { tools: local.declared }) };
    ctx.transport
      .call({ method: 'POST', path: '/api/message', body: { json: body }, idempotent: true }, { signal: stop.signal })
      .catch(fail);
  };
  let ended = false;
  let sent = false;
  try {
    const onReady = () => {
      if (!sent) send(); // once: a reconnect's subscription finds the message sent
      answerer?.recheck(); // a call of a turn id given again, or whose answer was lost, waits already
      sent = true;
      return undefined;
    };
    const hooks = { onReady, fromStart: true };
    for await (const raw of followFrames(ctx, sessionId, { signal: stop.signal }, hooks)) {
      const frame = raw as unknown as Frame;
      if (raw.data.turnId !== turnId) continue;
      const call = answerer && callOfFrame(raw);
      if (call) answerer.offer(call);
      if (frame.event === 'error') {
        ended = true;
        throw errorOfFrame(raw.data);
      }
      yield frame;
      if (frame.event === 'response') {
        ended = true;
        return;
      }
    }
  } catch (err) {
    throw stop.failure ?? err;
  } finally {
    stop.end();
    ctx.chatTurns.delete(turnId);
    if (sent && !ended && cancelTurn && signal?.aborted) await ctx.api.cancel({ sessionId }).catch(() => undefined);
  }
}
