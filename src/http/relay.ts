import type { EngineResponse } from './engine/index.ts';
import { send } from './respond.ts';

const SKIPPED_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection']);

export type RelayTarget = Pick<EngineResponse, 'ended' | 'send' | 'head' | 'write' | 'drained' | 'end'>;

/**
 * Writes a web-standard `Response`: buffered, or streamed by `streamReply` for `text/event-stream`. `extra`
 * headers come before the response's own; its hop-by-hop and length headers are dropped (the engine frames).
 */
export async function relayResponse(
  res: RelayTarget,
  response: Response,
  extra: Record<string, string>,
): Promise<void> {
  const headers: Record<string, string> = { ...extra };
  response.headers.forEach((value, key) => {
    if (!SKIPPED_HEADERS.has(key)) headers[key] = value;
  });
  const streaming =
    response.body !== null && (response.headers.get('content-type') ?? '').includes('text/event-stream');
  if (!streaming) {
    const body = Buffer.from(await response.arrayBuffer()).toString('utf8');
    return send(res, { status: response.status, headers, body });
  }
  // A stream's iterator cancels it when the loop is left early (the client went away).
  const body = response.body as ReadableStream<Uint8Array>;
  if (res.ended) return void (await body.cancel());
  await streamReply(res, response.status, headers, body);
}

/**
 * Writes a response whose body comes in pieces. While the peer is behind no further piece is taken (a lazy
 * source is paused); once the client is gone nothing more is written and the source is left (`return`). A source
 * that fails ends the response (its head went out: no error answer can follow) and the failure is rethrown.
 */
export async function streamReply(
  res: RelayTarget,
  status: number,
  headers: Record<string, string>,
  pieces: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
): Promise<void> {
  if (res.ended) return;
  res.head(status, headers);
  try {
    for await (const piece of pieces) {
      if (res.ended) break;
      if (!res.write(piece)) await res.drained();
      if (res.ended) break;
    }
  } finally {
    if (!res.ended) res.end();
  }
}
