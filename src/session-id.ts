import { z } from 'zod';

/** A lone UTF-16 surrogate: such a string has no UTF-8 form, so no file name and no JSON round trip. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The one rule for session ids, wherever one enters (REST, WebSocket frames, /mcp, the stores):
 * 1–128 UTF-16 code units of well-formed Unicode.
 */
export const sessionIdSchema = z
  .string()
  .min(1)
  .max(128)
  .refine((id) => !LONE_SURROGATE.test(id), 'must be well-formed Unicode');
