/**
 * How a model request fails before failures.ts names the cause: the provider's error answer (or an error event in
 * its stream), a connection that failed, or an abort. Shaped as the openai SDK's APIError family was, which these
 * replace, so every API's failures map alike: `status` (undefined for an error inside a stream), `headers`, the
 * provider's `error` object (a JSON body's `error`), its `code`, and a message that starts with the status.
 */
export class ModelApiError extends Error {
  readonly code: unknown;
  constructor(
    readonly status: number | undefined,
    readonly error: unknown,
    /** The answer's text when its body was not JSON. */
    text: string | undefined,
    readonly headers: Headers | undefined,
  ) {
    super(messageFor(status, error, text));
    this.name = 'ModelApiError';
    this.code = (error as { code?: unknown } | undefined)?.code;
  }
}

/** The request failed before an answer and nothing aborted it (refused, reset, DNS, a connect timeout). */
export class ModelConnectionError extends Error {
  constructor(cause: unknown) {
    super('Connection error.', { cause });
    this.name = 'ModelConnectionError';
  }
}

/**
 * A 2xx answer that is no whole model answer: a stream that ended cleanly without its API's final event (or with
 * a tool call it never closed), `reason` `incomplete_stream`, retried like a lost connection while no text was
 * streamed; or a body of another content type than the request asked for (an HTML page from a proxy or a wrong
 * base URL), `reason` `not_a_model_answer`, never retried.
 */
export class ModelAnswerError extends Error {
  constructor(
    readonly reason: 'incomplete_stream' | 'not_a_model_answer',
    message: string,
  ) {
    super(message);
    this.name = 'ModelAnswerError';
  }
}

/** The request was aborted before its answer. */
export class ModelAbortError extends Error {
  constructor() {
    super('Request was aborted.');
    this.name = 'ModelAbortError';
  }
}

function messageFor(status: number | undefined, error: unknown, text: string | undefined): string {
  const said = (error as { message?: unknown } | undefined)?.message;
  const msg = said ? (typeof said === 'string' ? said : JSON.stringify(said)) : error ? JSON.stringify(error) : text;
  if (status && msg) return `${status} ${msg}`;
  if (status) return `${status} status code (no body)`;
  return msg || '(no status code or body)';
}

/** The provider's answer breaks HTTP/1.1 or the request's contract (a malformed head, a 204 to a streaming request). */
export class ModelProtocolError extends Error {
  constructor(what: string, options?: { cause?: unknown }) {
    super(what, options);
    this.name = 'ModelProtocolError';
  }
}

/** A part of the answer passed `llm.maxEventBytes` (one stream event, or a whole unstreamed body); nothing more was held. */
export class ModelAnswerTooLarge extends Error {
  constructor(
    readonly maxBytes: number,
    readonly part: 'one stream event' | 'the whole reply',
  ) {
    super(`${part} passed ${maxBytes} bytes`);
    this.name = 'ModelAnswerTooLarge';
  }
}
