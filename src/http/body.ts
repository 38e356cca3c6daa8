import type { HttpResponse } from 'uWebSockets.js';
import { AppError } from '../errors/index.ts';

/**
 * Reads a request body of at most `maxBytes`, copying each chunk as uWS requires.
 * Rejects with INVALID_REQUEST past the limit (and stops reading). Resolves with an empty buffer
 * when there is no body. `onAborted` must already be attached by the caller.
 */
export function readBody(res: HttpResponse, maxBytes: number, declaredLength: number): Promise<Buffer> {
  if (declaredLength > maxBytes) return Promise.reject(tooLarge(maxBytes));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    res.onData((chunk, isLast) => {
      if (failed) return;
      size += chunk.byteLength;
      if (size > maxBytes) {
        failed = true;
        reject(tooLarge(maxBytes));
        return;
      }
      // uWS neuters the ArrayBuffer after this callback: copy it.
      chunks.push(Buffer.from(chunk.slice(0)));
      if (isLast) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
  });
}

const tooLarge = (maxBytes: number) =>
  new AppError('INVALID_REQUEST', `Request body exceeds ${maxBytes} bytes`, { limit: maxBytes });

/**
 * Parses a JSON request body. An empty body is `undefined`; a non-empty one must be declared
 * `application/json` and parse as JSON.
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
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch (e) {
    throw new AppError('INVALID_REQUEST', 'Malformed JSON in request body', { issue: (e as Error).message });
  }
}
