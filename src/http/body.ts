import type { EngineRequest } from './engine/index.ts';
import { AppError } from '../errors/index.ts';
import { MAX_JSON_DEPTH, textTooDeep } from '../json-depth.ts';

/** A request body as buffered: the bytes, or why there are none. */
export type BodyResult = { ok: true; raw: Buffer } | { ok: false; error: AppError };

/**
 * Reads at most `maxBytes` (a larger `Content-Length` is refused unread): INVALID_REQUEST with `reason`
 * `body_too_large` or `aborted` (the client left). Never rejects; no body is an empty buffer.
 */
export async function readBody(req: EngineRequest, maxBytes: number): Promise<BodyResult> {
  if (Number(req.headers['content-length'] ?? 0) > maxBytes) return { ok: false, error: tooLarge(maxBytes) };
  const read = await req.body(maxBytes);
  if (read.ok) return { ok: true, raw: read.bytes };
  return {
    ok: false,
    error:
      read.reason === 'too-large'
        ? tooLarge(maxBytes)
        : new AppError('INVALID_REQUEST', 'Client went away', { reason: 'aborted' }),
  };
}

export const tooLarge = (maxBytes: number) =>
  new AppError('INVALID_REQUEST', `Request body exceeds ${maxBytes} bytes`, {
    limit: maxBytes,
    reason: 'body_too_large',
  });

/** `undefined` for an empty body; else it must be `application/json`, within MAX_JSON_DEPTH (checked unparsed) and parse. */
export function parseJsonBody(raw: Buffer, contentType: string): unknown {
  if (raw.length === 0) return undefined;
  requireJsonType(contentType);
  const text = raw.toString('utf8');
  if (textTooDeep(text)) throw tooDeepError('request body');
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new AppError('INVALID_REQUEST', 'Malformed JSON in request body', { issue: (e as Error).message });
  }
}

/** `text` parsed, or `undefined` when it is not JSON (no JSON text parses to `undefined`). */
export function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The media type of a Content-Type header, lower case, without its parameters. */
export const mediaTypeOf = (contentType: string): string => contentType.split(';')[0]!.trim().toLowerCase();

/** A body of another media type than the route reads: INVALID_REQUEST (400 on REST; a face answers it 415). */
export class WrongContentType extends AppError {
  constructor(contentType: string, wanted: string) {
    super('INVALID_REQUEST', `Content-Type must be ${wanted}`, {
      issue: `got "${contentType || '(none)'}"`,
      suggestion: `send the header Content-Type: ${wanted}`,
    });
  }
}

const wrongType = (contentType: string, wanted: string): AppError => new WrongContentType(contentType, wanted);

/** Throws INVALID_REQUEST unless the media type is `application/json` or one of `more`. */
export function requireJsonType(contentType: string, more: readonly string[] = []): void {
  const mime = mediaTypeOf(contentType);
  if (mime !== 'application/json' && !more.includes(mime)) throw wrongType(contentType, 'application/json');
}

export const tooDeepError = (what: string) =>
  new AppError('INVALID_REQUEST', `The ${what} nests JSON deeper than ${MAX_JSON_DEPTH} levels`, {
    reason: 'too_deep',
    limit: MAX_JSON_DEPTH,
  });

/** A non-JSON body as it is; a non-empty one must be declared `mediaType` (INVALID_REQUEST otherwise). */
export function rawBody(raw: Buffer, contentType: string, mediaType: string): Buffer {
  if (raw.length > 0 && mediaTypeOf(contentType) !== mediaType) throw wrongType(contentType, mediaType);
  return raw;
}
