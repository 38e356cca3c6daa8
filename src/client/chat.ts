/**
 * `chat`: one turn as an async iterator. It follows the session (followFrames: live, resumed by seq after a drop), and
 * once subscribed sends the message over REST with a turn id of its own, so a retry after a lost answer runs nothing
 * twice (the server answers a known turn id as a duplicate). It yields that turn's frames and
 * ends after its `response`, or throws its `error` as an AgentdError. An abort ends it too, and with `cancelTurn`
 * cancels the turn on the server.
 */
import type { Api } from './api.ts';
import { errorOfFrame, inputError } from './errors.ts';
import { followFrames, type StreamContext } from './follow.ts';
import type { Frame } from './frames.ts';
import { checkKeys } from './options.ts';
import type { RouteArgs } from './api.ts';

type MessageBody = RouteArgs<'message'>['body'];

export interface ChatOptions extends Omit<MessageBody, 'message' | 'sessionId'> {
  signal?: AbortSignal;
  /** On abort, also cancel the turn on the server (default false: it runs on, and `follow` can pick it up). */
  cancelTurn?: boolean;
}

const CHAT_KEYS = ['signal', 'cancelTurn', 'turnId', 'imageData', 'resources', 'prompt'];

const newTurnId = (): string =>
  typeof crypto !== 'undefined' && 'randomUUID' in crypto
    ? crypto.randomUUID()
    : `t-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;

export async function* chat(
  ctx: StreamContext & { api: Api },
  sessionId: string,
  message: string,
  options: ChatOptions = {},
): AsyncGenerator<Frame> {
  if (typeof sessionId !== 'string' || sessionId === '') throw inputError('chat: sessionId must be a non-empty string');
  if (typeof message !== 'string') throw inputError(`chat: message must be a string, not ${typeof message}`);
  checkKeys('chat option', options, CHAT_KEYS);
  const { signal, cancelTurn, turnId = newTurnId(), ...fields } = options;
  const stop = new AbortController();
  const abort = () => stop.abort(signal?.reason);
  signal?.addEventListener('abort', abort, { once: true });
  let failure: unknown;
  const send = () => {
    const body = { ...fields, message, sessionId, turnId };
    ctx.transport
      .call({ method: 'POST', path: '/api/message', body: { json: body }, idempotent: true }, { signal: stop.signal })
      .catch((err: unknown) => {
        failure ??= err;
        stop.abort(err);
      });
  };
  let ended = false;
  try {
    let sent = false;
    const onReady = () => {
      if (!sent) send(); // once: a reconnect's subscription finds the message sent
      sent = true;
      return undefined;
    };
    const hooks = { onReady, fromStart: true };
    for await (const raw of followFrames(ctx, sessionId, { signal: stop.signal }, hooks)) {
      const frame = raw as unknown as Frame;
      if (raw.data.turnId !== turnId) continue;
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
    throw failure ?? err;
  } finally {
    signal?.removeEventListener('abort', abort);
    stop.abort();
    if (!ended && cancelTurn && signal?.aborted) await ctx.api.cancel({ sessionId }).catch(() => undefined);
  }
}
