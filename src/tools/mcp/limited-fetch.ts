/**
 * Bounds what an HTTP tool server can make agentd hold. A JSON body past `maxBytes` fails with ResultTooLarge (that
 * call fails, the session goes on). An SSE event line past `maxBytes` is never held: it becomes a JSON-RPC error for
 * the request it answers, so that call fails at once while the stream goes on.
 */
import { LineReader } from './line-reader.ts';
import type { FetchLike } from '../../egress/url-policy.ts';

/** JSON-RPC error code of a result over maxResultBytes (implementation-defined range; not an SDK code). */
export const RESULT_TOO_LARGE = -32050;

export const tooLargeMessage = (bytes: number, limit: number) =>
  `result of ${bytes}+ bytes is over the server's maxResultBytes (${limit})`;

/** The JSON-RPC error answering call `id`, whose result of `bytes`+ bytes was skipped. */
export const tooLargeAnswer = (id: string | number, bytes: number, limit: number) => ({
  jsonrpc: '2.0' as const,
  id,
  error: { code: RESULT_TOO_LARGE, message: tooLargeMessage(bytes, limit) },
});

export class ResultTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`result is over the server's maxResultBytes (${limit})`);
  }
}

export function limitedFetch(inner: FetchLike, maxBytes: number): FetchLike {
  return async (url, init) => {
    const response = await inner(url, init);
    if (!response.body) return response;
    const rebuilt = (body: ReadableStream<Uint8Array>) =>
      new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    if ((response.headers.get('content-type') ?? '').includes('text/event-stream'))
      return rebuilt(response.body.pipeThrough(sseLimiter(maxBytes)));
    let seen = 0;
    const counter = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > maxBytes) controller.error(new ResultTooLarge(maxBytes));
        else controller.enqueue(chunk);
      },
    });
    return rebuilt(response.body.pipeThrough(counter));
  };
}

function sseLimiter(maxBytes: number): TransformStream<Uint8Array, Uint8Array> {
  const encoder = new TextEncoder();
  let out: TransformStreamDefaultController<Uint8Array> | undefined;
  const reader = new LineReader(
    maxBytes,
    (line) => out?.enqueue(encoder.encode(`${line}\n`)),
    (id, bytes) => {
      if (id === undefined) return; // not an answer to a call: dropped
      out?.enqueue(encoder.encode(`data: ${JSON.stringify(tooLargeAnswer(id, bytes, maxBytes))}\n`));
    },
    true,
  );
  return new TransformStream({
    transform(chunk, controller) {
      out = controller;
      reader.push(Buffer.from(chunk));
    },
  });
}
