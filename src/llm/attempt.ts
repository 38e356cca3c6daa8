/**
 * One attempt of a model request (client.ts runs the loop of attempts around it): the request, then its whole
 * answer read by its media type, a stream through the lean SSE reader (sse.ts) or a JSON reply whole.
 *
 * Contracts:
 * - A 204 to a streaming request and an answer neither SSE nor JSON (answerKind) fail (ModelProtocolError,
 *   ModelAnswerError `not_a_model_answer`); the body of the latter is read as an error body is (bounded).
 * - `watch(size)` hears the size of the answer so far after every stream event (once for a whole reply), so the
 *   caller can stop a stalled or too long one by aborting `signal`; an aborted attempt rejects with abortError.
 * - The text of one network read reaches `onText` as one delta; an exception from `onText` rejects as
 *   TextCallbackError (adapter.ts).
 * - A stream the folder finds `unfinished` fails as `incomplete_stream`: only a whole answer is a step.
 */
import { emitText, type Adapter } from './adapter.ts';
import { ModelAnswerError, ModelProtocolError } from './api-error.ts';
import type { Http1Answer } from './http1-client/index.ts';
import { headersOf, MAX_ERROR_BODY_BYTES, wholeBody } from './lean-request.ts';
import { createSseReader } from './sse.ts';
import type { ModelRequest, ModelStep } from './types.ts';

/** How an aborted model request rejects: a DOMException named 'AbortError'. */
export function abortError(): DOMException {
  return new DOMException('model request aborted', 'AbortError');
}

/**
 * How a 2xx answer is read, by its media type: a stream as SSE (`text/event-stream`; a stream without a
 * content type too), JSON whole (`application/json`, `+json`: also a server that does not stream). Anything
 * else (an HTML page from a proxy or a wrong base URL) is no model answer.
 */
function answerKind(contentType: string | string[] | undefined, stream: boolean): 'sse' | 'json' | ModelAnswerError {
  const type = (Array.isArray(contentType) ? contentType[0] : contentType)?.split(';')[0]?.trim().toLowerCase();
  if (type === undefined || type === '') return stream ? 'sse' : 'json';
  if (type === 'application/json' || type.endsWith('+json')) return 'json';
  if (stream && type === 'text/event-stream') return 'sse';
  return new ModelAnswerError(
    'not_a_model_answer',
    `the model endpoint answered ${type}, not ${stream ? 'a model stream' : 'JSON'} (is llm.baseURL right?)`,
  );
}

export interface AttemptDeps {
  /** Sends one request (lean-request.ts). */
  post: (body: Buffer, signal: AbortSignal) => Promise<Http1Answer>;
  adapter: Adapter;
  /** `llm.maxEventBytes`: the bound on one stream event and on a whole reply. */
  maxEventBytes: number;
  /** Ids for tool calls the answer leaves without one. */
  newId: () => string;
}

export type Attempt = (
  body: Buffer,
  signal: AbortSignal,
  onText: ModelRequest['onText'],
  watch: (size: number) => void,
) => Promise<ModelStep>;

/** The attempts of one model's client. */
export function createAttempt({ post, adapter, maxEventBytes, newId }: AttemptDeps): Attempt {
  /** A streamed answer, read to its end. */
  async function readStream(
    answer: Http1Answer,
    signal: AbortSignal,
    onText: ModelRequest['onText'],
    watch: (size: number) => void,
  ): Promise<ModelStep> {
    // The text of one network read reaches `onText` as one delta (the concatenation is the same): when
    // a busy process reads several events at once, the session and every face handle one piece, not many.
    let held = '';
    const folder = adapter.folder(onText && ((delta) => void (held += delta)));
    const reader = createSseReader(
      (event) => {
        folder.add(event);
        watch(folder.size);
      },
      () => headersOf(answer.headers),
      maxEventBytes,
    );
    const release = (): void => {
      const text = held;
      held = '';
      emitText(onText, text);
    };
    await answer.body.read((chunk) => {
      try {
        reader.push(chunk);
      } finally {
        release();
      }
    });
    try {
      reader.end();
    } finally {
      release();
    }
    // The caller decides what an abort meant (its own, a timeout, a stall, a reply too long).
    if (signal.aborted) throw abortError();
    const unfinished = folder.unfinished(reader.done);
    if (unfinished !== undefined)
      throw new ModelAnswerError('incomplete_stream', `model stream ended before its answer did (${unfinished})`);
    return folder.build(newId);
  }

  /** One attempt: the request and its whole answer. */
  return async (body, signal, onText, watch) => {
    const answer = await post(body, signal);
    // No content is no stream: a malformed answer, not an empty reply.
    if (adapter.stream && answer.statusCode === 204)
      throw new ModelProtocolError('a 204 (no content) answer to a streaming request');
    const kind = answerKind(answer.headers['content-type'], adapter.stream);
    if (kind instanceof ModelAnswerError) {
      // Read as an error body is (bounded: past MAX_ERROR_BODY_BYTES the connection is closed, not reused).
      await answer.body.text(MAX_ERROR_BODY_BYTES).catch(() => undefined);
      throw kind;
    }
    if (kind === 'sse') return readStream(answer, signal, onText, watch);
    const step = adapter.whole(await wholeBody(answer, maxEventBytes), newId);
    if (signal.aborted) throw abortError();
    watch(step.text.length);
    emitText(onText, step.text);
    return step;
  };
}
