/**
 * A session's frames as an async iterator that outlives its connection: it subscribes with `since` = the newest seq
 * seen, so after a dropped connection (reconnected with a doubling wait) the server replays what was stored
 * meanwhile, and a frame seen before is not yielded again (createSeqFilter). A `hello` naming another store than
 * before, or a `storeChanged` (the store lost data), drops the seqs held and replays from 0. Each durable frame comes once, in
 * order; transient frames (chunks) of the gap are gone unless the server sends a catch-up frame. An abort closes the
 * connection and ends the iteration with the signal's reason.
 */
import { AgentdError } from './errors.ts';
import { sleep, type Transport } from './http.ts';
import type { ClientOptions } from './options.ts';
import { openSocket, socketUrl, type FrameSocket, type RawFrame } from './socket.ts';
import { createSeqFilter } from './frames.ts';

export interface FollowOptions {
  /** Replay the session's stored frames after this seq first (0: all of them); default: live frames only. */
  since?: number;
  signal?: AbortSignal;
  /** Admin only: the principal whose session it is. */
  owner?: string;
}

export interface StreamContext {
  transport: Transport;
  options: ClientOptions;
}

/**
 * What a stream's owner hears of its subscription: `onReady` each time a subscription is in place (the server
 * answered a ping sent after it: the first, and each after a reconnect), when it may yield a frame of its own; `fromStart`: after a drop before any frame
 * came, resume from seq 0 rather than live only (for owners that pick their frames out, as `chat` does by turn).
 */
export interface FollowHooks {
  onReady?: () => RawFrame | undefined;
  fromStart?: boolean;
}

/** The wait before attempt `attempt` (1, 2, ...) to reach the server again: `reconnect`'s, doubling. */
export const backoff = (options: ClientOptions, attempt: number): number =>
  Math.min(options.reconnect?.maxDelayMs ?? 5000, (options.reconnect?.initialDelayMs ?? 250) * 2 ** (attempt - 1));

/**
 * A stream's own stop: aborted with the caller's `signal` (one aborted already too) or at its first failure (`fail`),
 * which `failure` keeps for the stream to throw instead of the abort; `end` stops it and lets go of the caller's signal.
 */
export interface StreamStop {
  signal: AbortSignal;
  failure: unknown;
  fail: (err: unknown) => void;
  end: () => void;
}

export function streamStop(signal: AbortSignal | undefined): StreamStop {
  const stop = new AbortController();
  const abort = () => stop.abort(signal?.reason);
  if (signal?.aborted) abort();
  signal?.addEventListener('abort', abort, { once: true });
  const s: StreamStop = {
    signal: stop.signal,
    failure: undefined,
    fail: (err: unknown) => {
      s.failure ??= err;
      stop.abort(err);
    },
    end: () => {
      signal?.removeEventListener('abort', abort);
      stop.abort();
    },
  };
  return s;
}

async function connect(ctx: StreamContext): Promise<FrameSocket> {
  const url = socketUrl(ctx.transport.baseUrl, await ctx.transport.credential());
  return openSocket(url, ctx.options.WebSocket);
}

/**
 * A refused upgrade tells a browser nothing of why: a REST call with the same credential does. A key the server
 * refuses (401, 403) fails the stream at once instead of after every reconnect attempt, and so does a server this
 * client never reached (nothing listens at its URL: reconnecting is for connections that were up).
 */
async function refusedAccess(ctx: StreamContext): Promise<void> {
  try {
    await ctx.transport.call({ method: 'GET', path: '/api/sessions?limit=1' });
  } catch (err) {
    if (!(err instanceof AgentdError)) return;
    if (err.status === 401 || err.status === 403 || !ctx.transport.reached) throw err;
  }
}

export async function* followFrames(
  ctx: StreamContext,
  sessionId: string,
  options: FollowOptions,
  hooks: FollowHooks = {},
): AsyncGenerator<RawFrame> {
  const { signal } = options;
  const filter = createSeqFilter(options.since);
  const maxAttempts = ctx.options.reconnect?.maxAttempts ?? 10;
  let failures = 0;
  let storeId: string | undefined;
  let connections = 0;
  let socket: FrameSocket | undefined;
  const closeOnAbort = () => socket?.close();
  signal?.addEventListener('abort', closeOnAbort, { once: true });
  const subscribe = (s: FrameSocket) => {
    const since = filter.since ?? (hooks.fromStart && connections > 1 ? 0 : undefined);
    s.send({
      type: 'subscribe',
      sessionId,
      ...(since !== undefined && { since }),
      ...(options.owner !== undefined && { owner: options.owner }),
    });
    if (hooks.onReady) s.send({ type: 'ping' });
  };
  try {
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      try {
        socket = await connect(ctx);
      } catch (err) {
        await refusedAccess(ctx);
        if (++failures > maxAttempts) throw err;
        await sleep(backoff(ctx.options, failures), signal);
        continue;
      }
      if (signal?.aborted) throw signal.reason;
      ctx.transport.markReached();
      connections++;
      subscribe(socket);
      for (let frame = await socket.next(); frame; frame = await socket.next()) {
        failures = 0;
        if (frame.event === 'hello' || frame.event === 'storeChanged') {
          const seen = String(frame.data.storeId);
          // Another store numbers seqs anew: what was seen says nothing about it, so replay it from the start.
          if (storeId !== undefined && seen !== storeId) {
            filter.restart();
            subscribe(socket);
          }
          storeId = seen;
          continue;
        }
        if (frame.event === 'pong') {
          const own = hooks.onReady?.();
          if (own) yield own;
          continue;
        }
        if (frame.data.sessionId !== sessionId) continue;
        if (filter.admit(frame)) yield frame;
      }
      if (signal?.aborted) throw signal.reason;
      if (++failures > maxAttempts)
        throw new AgentdError(0, 'NETWORK_ERROR', `Lost the connection to ${ctx.transport.baseUrl}`);
      await sleep(backoff(ctx.options, failures), signal);
    }
  } finally {
    signal?.removeEventListener('abort', closeOnAbort);
    socket?.close();
  }
}
