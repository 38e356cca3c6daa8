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
 * - Backpressure: when `res.write` reports a full socket buffer, the relay reads nothing more from the
 *   stream until uWS calls `onWritable`, so a slow reader holds at most one chunk beyond the socket's
 *   buffer here, and the stream itself is paused (its producer sees the pull stop).
 * - When the client goes away (`signal` aborts, `state.aborted`), the stream is cancelled and nothing more is
 *   written. `state.aborted` is true once the relay has ended the response.
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
  res.cork(() => {
    res.writeStatus(statusLine(response.status));
    for (const key in headers) res.writeHeader(key, headers[key]!);
  });
  for (;;) {
    const { done, value } = await reader.read();
    if (state.aborted) return void (await reader.cancel());
    if (done) break;
    let accepted = true;
    res.cork(() => {
      accepted = res.write(value);
    });
    if (!accepted) await drained(res, signal);
    if (state.aborted) return void (await reader.cancel());
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
