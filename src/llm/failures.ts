/**
 * What went wrong with a model request, in our terms: which failures (api-error.ts) are worth a retry, how
 * long to wait before it, and the AppError('AGENT_ERROR') that names the cause. Messages and
 * details never carry the API key: provider text is scrubbed of it (and of key-like tokens), and
 * the provider's own words are left out entirely for 401s (OpenAI echoes part of the key there).
 */
import { backoffDelay, type BackoffPolicy } from '../backoff.ts';
import type { Provider } from '../config/schema.ts';
import { AppError, messageOf } from '../errors/index.ts';
import {
  ModelAnswerError,
  ModelAnswerTooLarge,
  ModelApiError,
  ModelConnectionError,
  ModelProtocolError,
} from './api-error.ts';
import { HttpFrameError } from './http1-client/index.ts';
import { OVERFLOW_SIGNATURES } from './providers.ts';

/**
 * `details.reason` of a model request the provider refused because it did not fit the model's
 * context window (any preset's wording, see OverflowSignature); `details.contextWindow` carries the
 * window when the provider named it. The agent compacts and retries once on it.
 */
export const CONTEXT_OVERFLOW = 'context_overflow';

/** Upper bound on any wait before a retry, whatever Retry-After asks for. */
export const MAX_RETRY_WAIT_MS = 10_000;

export interface RequestFacts {
  provider: Provider;
  model: string;
  baseURL: string;
  apiKey: string;
  timeoutMs: number;
}

const KEY_LIKE = /\b(?:sk|rk|pk|gsk|xai|csk)[-_][-_A-Za-z0-9*.]{6,}|\bAIza[-_A-Za-z0-9]{10,}/g;

/** `text` without the key and without anything shaped like a key, cut to a readable length. */
export function scrub(text: string, apiKey: string): string {
  let out = apiKey.length >= 4 ? text.split(apiKey).join('[REDACTED]') : text;
  out = out.replace(KEY_LIKE, '[REDACTED]');
  return out.length > 300 ? `${out.slice(0, 300)}…` : out;
}

/** Status of an error answer; undefined for anything else (including mid-stream errors). */
export function statusOf(e: unknown): number | undefined {
  return e instanceof ModelApiError ? e.status : undefined;
}

function headersOf(e: unknown): Headers | undefined {
  return e instanceof ModelApiError ? e.headers : undefined;
}

/**
 * The HTTP status an error reported inside a stream stands for, by its type or code: Anthropic's
 * `overloaded_error` (529), `rate_limit_error` (429), `api_error` (500); Responses' `server_error`
 * (500), `rate_limit_exceeded` (429). Undefined for any other.
 */
const STREAM_ERROR_STATUS: Record<string, number> = {
  overloaded_error: 529,
  rate_limit_error: 429,
  rate_limit_exceeded: 429,
  api_error: 500,
  server_error: 500,
};

function streamStatusOf(e: unknown): number | undefined {
  if (!(e instanceof ModelApiError) || e.status !== undefined) return undefined;
  const code = errorParts(e).code;
  return code === undefined ? undefined : STREAM_ERROR_STATUS[code];
}

/** Codes of a request refused by the provider's content filter (Azure OpenAI, OpenAI Responses). */
const CONTENT_FILTER_CODES = new Set(['content_filter', 'content_policy_violation', 'invalid_prompt']);

/**
 * True for answers a retry may fix: 408, 409, 429, 5xx (or `x-should-retry: true`), an overload or
 * rate limit reported inside a stream, lost connections and streams that ended before their answer did.
 */
export function isRetryable(e: unknown): boolean {
  if (e instanceof ModelConnectionError) return true;
  if (e instanceof ModelAnswerError) return e.reason === 'incomplete_stream';
  if (streamStatusOf(e) !== undefined) return true;
  const status = statusOf(e);
  if (status === undefined) return false;
  const hint = headersOf(e)?.get('x-should-retry');
  if (hint === 'true') return true;
  if (hint === 'false') return false;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Model retries: 0.5 s doubling, at most 8 s, up to 25 % shorter at random. */
const MODEL_BACKOFF: BackoffPolicy = { baseMs: 500, maxMs: 8000, jitterDown: 0.25, jitterUp: 0 };

/**
 * Wait before retry number `attempt` (0-based): the provider's `retry-after-ms` or `Retry-After`
 * (seconds or an HTTP date) when given, else exponential backoff from 0.5 s with up to 25 % jitter;
 * never more than MAX_RETRY_WAIT_MS.
 */
export function retryDelayMs(e: unknown, attempt: number, random: () => number, now: () => number): number {
  const headers = headersOf(e);
  let ms: number | undefined;
  const retryAfterMs = headers?.get('retry-after-ms');
  if (retryAfterMs) ms = parseFloat(retryAfterMs);
  const retryAfter = headers?.get('retry-after');
  if ((ms === undefined || Number.isNaN(ms)) && retryAfter) {
    const seconds = parseFloat(retryAfter);
    ms = Number.isNaN(seconds) ? Date.parse(retryAfter) - now() : seconds * 1000;
  }
  if (ms === undefined || Number.isNaN(ms)) ms = backoffDelay(attempt, MODEL_BACKOFF, random);
  return Math.max(0, Math.min(ms, MAX_RETRY_WAIT_MS));
}

function failure(message: string, facts: RequestFacts, reason: string, status?: number): AppError {
  const details: Record<string, unknown> = { provider: facts.provider, model: facts.model, reason };
  if (status !== undefined) details['status'] = status;
  return new AppError('AGENT_ERROR', message, details);
}

export function stalledFailure(facts: RequestFacts, idleMs: number): AppError {
  return failure(`model stream stalled: no event for ${idleMs} ms (llm.idleTimeoutMs)`, facts, 'model_stalled');
}

export function tooLongFailure(facts: RequestFacts, maxChars: number): AppError {
  return failure(
    `model reply longer than ${maxChars} characters (llm.maxReplyChars); the request was stopped`,
    facts,
    'reply_too_long',
  );
}

/** The provider's content filter refused the request or withheld the whole reply (`details.reason: "content_filter"`). */
export function contentFilterFailure(facts: RequestFacts, status?: number, text = ''): AppError {
  return failure(`the model provider's content filter withheld the reply${text}`, facts, 'content_filter', status);
}

export function timeoutFailure(facts: RequestFacts): AppError {
  return failure(`model request timed out after ${facts.timeoutMs} ms`, facts, 'timeout');
}

/** The provider's explanation from an error answer, scrubbed; '' when it gave none. */
function providerText(e: unknown, facts: RequestFacts): string {
  const body = (e as { error?: unknown }).error as { message?: unknown } | string | undefined;
  const raw = typeof body === 'string' ? body : typeof body?.message === 'string' ? body.message : '';
  return raw ? `: ${scrub(raw, facts.apiKey)}` : '';
}

/** The provider's error code (else its type) and message, raw (for matching, never shown). */
function errorParts(e: ModelApiError): { code: string | undefined; message: string } {
  const body = e.error as { message?: unknown; code?: unknown; type?: unknown } | string | undefined;
  if (typeof body === 'string') return { code: undefined, message: body };
  const code = [body?.code, body?.type].find((c) => typeof c === 'string');
  return { code, message: typeof body?.message === 'string' ? body.message : e.message };
}

/** Whether an error answer says the request overflowed the context window; the window when it names one (0 when not). */
export function overflowOf(e: unknown): { window: number } | undefined {
  if (!(e instanceof ModelApiError)) return undefined;
  const status = statusOf(e);
  const { code, message } = errorParts(e);
  for (const sig of OVERFLOW_SIGNATURES) {
    if (status !== undefined && status !== sig.status && status !== 413) continue;
    if ((sig.code !== undefined && code === sig.code) || sig.pattern.test(message)) {
      const named = OVERFLOW_SIGNATURES.map((s) => s.window?.exec(message)?.[1]).find((w) => w !== undefined);
      return { window: named ? Number(named) : 0 };
    }
  }
  return undefined;
}

/** The deepest cause's code or message, e.g. ECONNREFUSED. */
function rootCause(e: unknown): string {
  let cur: unknown = e;
  for (let i = 0; i < 5 && cur instanceof Error && cur.cause !== undefined; i++) cur = cur.cause;
  if (cur && typeof cur === 'object' && 'code' in cur && typeof cur.code === 'string') return cur.code;
  return messageOf(cur);
}

/** Where `baseURL` points, without credentials, query or a trailing slash (safe to log and store). */
export function endpointOf(baseURL: string): string {
  try {
    const url = new URL(baseURL);
    return (url.origin + url.pathname).replace(/\/+$/, '');
  } catch {
    return 'the configured baseURL';
  }
}

/** Maps anything a model request threw to AGENT_ERROR; `retries` is how many retries were spent. */
export function toAgentError(e: unknown, facts: RequestFacts, retries = 0): AppError {
  const after = retries > 0 ? ` after ${retries} ${retries === 1 ? 'retry' : 'retries'}` : '';
  if (e instanceof ModelConnectionError) {
    const cause = scrub(rootCause(e), facts.apiKey);
    return failure(
      `could not reach the model provider at ${endpointOf(facts.baseURL)} (${cause})${after}`,
      facts,
      'connection',
    );
  }
  if (e instanceof ModelApiError) {
    const text = providerText(e, facts);
    const overflow = overflowOf(e);
    if (overflow) {
      const err = failure(
        `the request did not fit the model's context window${text}`,
        facts,
        CONTEXT_OVERFLOW,
        e.status,
      );
      if (overflow.window > 0) (err.details as Record<string, unknown>)['contextWindow'] = overflow.window;
      return err;
    }
    if (CONTENT_FILTER_CODES.has(errorParts(e).code ?? '')) return contentFilterFailure(facts, e.status, text);
    // An error inside a stream that stands for a status (an overload, a rate limit) fails as that status would.
    const status = e.status ?? streamStatusOf(e);
    if (status === undefined)
      return failure(`model provider reported an error mid-stream${text}`, facts, 'stream_error');
    if (status === 401) return failure('model provider rejected the API key (401)', facts, 'unauthorized', status);
    if (status === 403) return failure(`model provider refused access (403)${text}`, facts, 'forbidden', status);
    if (status === 404)
      return failure(`model "${facts.model}" or its endpoint was not found (404)${text}`, facts, 'not_found', status);
    if (status === 429)
      return failure(`model provider rate limit exceeded (429)${after}${text}`, facts, 'rate_limited', status);
    if (status >= 500)
      return failure(
        `model provider failed (${status === 529 ? '529, overloaded' : status})${after}${text}`,
        facts,
        'provider_error',
        status,
      );
    if (status === 400 || status === 422)
      return failure(`model provider rejected the request (${status})${text}`, facts, 'bad_request', status);
    return failure(`model provider answered ${status}${after}${text}`, facts, 'http_error', status);
  }
  if (e instanceof ModelAnswerError) return failure(`${e.message}${after}`, facts, e.reason);
  if (e instanceof ModelProtocolError || e instanceof HttpFrameError) {
    const what = e instanceof HttpFrameError ? e.what : e.message;
    return failure(`the model provider sent a malformed answer (${what})`, facts, 'bad_response');
  }
  if (e instanceof ModelAnswerTooLarge)
    return failure(
      `model answer too large: ${e.part} passed ${e.maxBytes} bytes (llm.maxEventBytes); the request was stopped`,
      facts,
      'event_too_large',
    );
  if (e instanceof SyntaxError) return failure('model stream sent data that is not JSON', facts, 'bad_stream');
  const message = e instanceof Error ? scrub(e.message, facts.apiKey) : 'unknown error';
  return failure(`model stream was interrupted (${message})`, facts, 'stream_interrupted');
}
