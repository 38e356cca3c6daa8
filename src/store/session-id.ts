import { AppError } from '../errors/index.ts';

/** A lone UTF-16 surrogate: such a string has no UTF-8 form, so no file name and no JSON round trip. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Every store accepts any non-empty, well-formed (UTF-16 without lone surrogates) string as a
 * session id; anything else is refused with INVALID_REQUEST. Length and characters are otherwise free.
 */
export function assertSessionId(id: string): void {
  if (typeof id !== 'string' || id.length === 0) {
    throw new AppError('INVALID_REQUEST', 'sessionId must be a non-empty string');
  }
  if (LONE_SURROGATE.test(id)) {
    throw new AppError('INVALID_REQUEST', 'sessionId must be well-formed Unicode', { sessionId: id });
  }
}
