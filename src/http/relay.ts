import type { HttpResponse } from './engine/index.ts';
import { send, statusLine } from './respond.ts';

const SKIPPED_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection']);

/** The part of a uWS response the relay writes to (a fake in tests). */
export type RelayTarget = Pick<HttpResponse, 'cork' | 'writeStatus' | 'writeHeader' | 'write' | 'end' | 'onWritable'>;

/**
 * Writes a web-standard `Response` to uWS: buffered for JSON, streamed for SSE (`text/event-stream`).
 *
 * Contracts:
 * - `extra` headers (rate limit, CORS) are written before the response's own; hop-by-hop and length headers
 *   of the `Response` are dropped (uWS frames the body itself).
 * - Every write happens inside `res.cork()` (callers are past an await).
 * - The stream is written by `streamReply` (backpressure: the stream is paused while the socket's buffer
 *   is full; a client that goes away cancels it). `state.aborted` is true once the relay has ended the response.
 */
export async function relayResponse(
  res: RelayTarget,
  state: { aborted: boolean },
  response: Response,
  extra: Record<string, string>,
  signal: AbortSignal,
): Promise<void> {
  const headers: Record<string, string> = { ...extra };
  response.headers.forEach((value, key) => {
    if (!SKIPPED_HEADERS.has(key)) headers[key] = value;
  });
  const streaming = response.body !== null && (response.headers.get('content-type') ?? '').includes('text/event-stream');
  if (!streaming) {
    const body = Buffer.from(await response.arrayBuffer()).toString('utf8');
    return send(res, state, { status: response.status, headers, body });
  }
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  if (state.aborted) return void (await reader.cancel());
  await streamReply(res, state, response.status, headers, readAll(reader), signal);
}

/** The chunks of a stream; leaving the loop early (the client went away) cancels the stream. */
async function* readAll(reader: ReadableStreamDefaultReader<Uint8Array>): AsyncGenerator<Uint8Array> {
  let done = false;
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) {
        done = true;
        return;
      }
      yield next.value;
    }
  } finally {
    if (!done) await reader.cancel();
  }
}

/**
 * Writes a response whose body comes in pieces (an SSE relay, an NDJSON export): the status and
 * `headers`, each piece as it comes (chunked), then the end.
 *
 * Contracts:
 * - Every write happens inside `res.cork()` (callers are past an await).
 * - Backpressure: when `res.write` reports a full socket buffer, no further piece is taken from
 *   `pieces` until uWS calls `onWritable`, so a slow reader holds at most one piece beyond the
 *   socket's buffer here, and a lazy source (a generator, a stream) is paused.
 * - When the client goes away (`signal` aborts, `state.aborted`), nothing more is written and the
 *   source is left (its `return`: a stream is cancelled). `state.aborted` is true once the response ended.
 * - A body with no piece is answered with an empty body (Content-Length: 0).
 */
export async function streamReply(
  res: RelayTarget,
  state: { aborted: boolean },
  status: number,
  headers: Record<string, string>,
  pieces: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
  signal: AbortSignal,
): Promise<void> {
  if (state.aborted) return;
  res.cork(() => {
    res.writeStatus(statusLine(status));
    for (const key in headers) res.writeHeader(key, headers[key]!);
  });
  for await (const piece of pieces) {
    if (state.aborted) break;
    let accepted = true;
    res.cork(() => {
      accepted = res.write(piece);
    });
    if (!accepted) await drained(res, signal);
    if (state.aborted) break;
  }
  if (state.aborted) return;
  state.aborted = true;
  res.cork(() => void res.end());
}

/** Resolves when uWS can take more (`onWritable`) or the client went away. */
function drained(res: RelayTarget, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const onAbort = () => resolve();
    signal.addEventListener('abort', onAbort, { once: true });
    res.onWritable(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
      return true;
    });
  });
}
