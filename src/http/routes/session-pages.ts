/**
 * `GET /api/sessions` a page at a time (docs/api.md, "Listing sessions, a page at a time"): its query, and the
 * opaque cursor, base64url of `{"v":1,"after":<the page's last key>}`. The next page lists the keys after it,
 * so a session that exists throughout is listed exactly once, whatever changes between pages.
 */
import { z } from 'zod';
import { sessionKeySchema } from '../../session-id.ts';
import { jsonOrUndefined } from '../body.ts';

export const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 500;

const CURSOR = /^[A-Za-z0-9_-]+$/;

/** The cursor of the page that follows the one ending with `lastKey`. */
export function encodeCursor(lastKey: string): string {
  return Buffer.from(JSON.stringify({ v: 1, after: lastKey }), 'utf8').toString('base64url');
}

/** The key a cursor continues after; undefined when `cursor` is not one `encodeCursor` makes. */
export function decodeCursor(cursor: string): string | undefined {
  if (!CURSOR.test(cursor)) return undefined;
  const value = jsonOrUndefined(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (typeof value !== 'object' || value === null) return undefined;
  const { v, after } = value as { v?: unknown; after?: unknown };
  if (v !== 1 || typeof after !== 'string' || !sessionKeySchema.safeParse(after).success) return undefined;
  return encodeCursor(after) === cursor ? after : undefined;
}

const BAD_LIMIT = `limit must be an integer from 1 to ${MAX_LIMIT}`;
const BAD_CURSOR = 'cursor must be the nextCursor of a previous page, as it came';

export const sessionsQuery = z.object({
  limit: z.coerce
    .number({ error: BAD_LIMIT })
    .int({ error: BAD_LIMIT })
    .min(1, { error: BAD_LIMIT })
    .max(MAX_LIMIT, { error: BAD_LIMIT })
    .optional()
    .describe(`Sessions per page, 1–${MAX_LIMIT} (default ${DEFAULT_LIMIT})`),
  cursor: z
    .string()
    .max(2048, { error: BAD_CURSOR })
    .refine((c) => decodeCursor(c) !== undefined, { error: BAD_CURSOR })
    .optional()
    .describe('Where the page starts: the `nextCursor` of the previous page (absent: the first page)'),
});
