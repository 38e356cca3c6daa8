import type { HttpResponse } from './engine/index.ts';
import { AppError } from '../errors/index.ts';
import { MAX_JSON_DEPTH, textTooDeep } from '../json-depth.ts';

/** A request body as buffered: the bytes, or why there are none. */
export type BodyResult = { ok: true; raw: Buffer } | { ok: false; error: AppError };

/**
 * Starts buffering a request body. Call it synchronously in the uWS handler, before the first `await`
 * (house rule 10): uWS hands chunks only to an `onData` handler that is attached by then.
 *
 * Contracts:
 * - Each chunk is copied (uWS neuters its ArrayBuffer after the callback).
 * - At most `maxBytes` are kept. A declared `Content-Length` above it, or more bytes than it arriving, resolves
 *   `{ ok: false }` with INVALID_REQUEST (`details: { limit, reason: 'body_too_large' }`); later chunks are
 *   dropped, not buffered.
 * - Never rejects, so nobody has to await it early. Resolves with an empty buffer when there is no body, and
 *   `{ ok: false }` when `signal` aborts first (the client went away). `onAborted` must already be attached.
 */
export function bufferBody(res: HttpResponse, maxBytes: number, declaredLength: number, signal?: AbortSignal): Promise<BodyResult> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (result: BodyResult) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    signal?.addEventListener('abort', () => settle({ ok: false, error: new AppError('INVALID_REQUEST', 'Client went away', { reason: 'aborted' }) }), { once: true });
    if (declaredLength > maxBytes) {
      res.onData(() => undefined);
      settle({ ok: false, error: tooLarge(maxBytes) });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    res.onData((chunk, isLast) => {
      if (settled) return;
      size += chunk.byteLength;
      if (size > maxBytes) return settle({ ok: false, error: tooLarge(maxBytes) });
      chunks.push(Buffer.from(chunk.slice(0)));
      if (isLast) settle({ ok: true, raw: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) });
    });
  });
}

export const tooLarge = (maxBytes: number) =>
  new AppError('INVALID_REQUEST', `Request body exceeds ${maxBytes} bytes`, { limit: maxBytes, reason: 'body_too_large' });

/**
 * Parses a JSON request body. An empty body is `undefined`; a non-empty one must be declared
 * `application/json`, nest no deeper than MAX_JSON_DEPTH (judged from the text, before parsing) and
 * parse as JSON.
 */
export function parseJsonBody(raw: Buffer, contentType: string): unknown {
  if (raw.length === 0) return undefined;
  const mime = contentType.split(';')[0]!.trim().toLowerCase();
  if (mime !== 'application/json') {
    throw new AppError('INVALID_REQUEST', 'Content-Type must be application/json', {
      issue: `got "${contentType || '(none)'}"`,
      suggestion: 'send the header Content-Type: application/json',
    });
  }
  const text = raw.toString('utf8');
  if (textTooDeep(text)) throw tooDeepError('request body');
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new AppError('INVALID_REQUEST', 'Malformed JSON in request body', { issue: (e as Error).message });
  }
}

export const tooDeepError = (what: string) =>
  new AppError('INVALID_REQUEST', `The ${what} nests JSON deeper than ${MAX_JSON_DEPTH} levels`, { reason: 'too_deep', limit: MAX_JSON_DEPTH });

/**
 * A raw (non-JSON) request body: an empty one as it is; a non-empty one must be declared with
 * `mediaType` (INVALID_REQUEST otherwise). What it holds is the handler's to check.
 */
export function rawBody(raw: Buffer, contentType: string, mediaType: string): Buffer {
  const mime = contentType.split(';')[0]!.trim().toLowerCase();
  if (raw.length > 0 && mime !== mediaType) {
    throw new AppError('INVALID_REQUEST', `Content-Type must be ${mediaType}`, {
      issue: `got "${contentType || '(none)'}"`,
      suggestion: `send the header Content-Type: ${mediaType}`,
    });
  }
  return raw;
}
