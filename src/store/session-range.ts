/**
 * The order sessions are listed in, and the ranges a listing asks for (`EventStore.list`).
 * - Sessions are ordered by key in code point order, the order of the keys' UTF-8 bytes, as Redis's ZRANGEBYLEX, so
 *   every engine lists alike (JavaScript's `<` differs between a character above U+FFFF and one in U+E000–U+FFFF).
 * - A range holds the keys `k` with `after < k`, `from <= k` and `k < below` (each optional); `limit` caps how many
 *   are answered, the first ones. Paging by key neither skips nor repeats a session that exists throughout.
 */
import { compareKeys } from '../session-id.ts';
import type { SessionRange } from './types.ts';

export { compareKeys };

/** Whether `key` lies in the range (its bounds; `limit` aside). */
export function inRange(key: string, range: SessionRange | undefined): boolean {
  if (!range) return true;
  if (range.after !== undefined && compareKeys(key, range.after) <= 0) return false;
  if (range.from !== undefined && compareKeys(key, range.from) < 0) return false;
  return range.below === undefined || compareKeys(key, range.below) < 0;
}

/** Whether some key starting with `prefix` may lie in the range (a hashed file name's, session-file-name.ts). */
export function mayHoldPrefix(prefix: string, range: SessionRange | undefined): boolean {
  if (!range) return true;
  if (range.below !== undefined && compareKeys(prefix, range.below) >= 0) return false; // such keys ≥ prefix ≥ below
  // Every key starting with `prefix` is below `bound` when prefix < bound and bound does not start with prefix.
  const allBelow = (bound: string) => compareKeys(prefix, bound) < 0 && !bound.startsWith(prefix);
  if (range.after !== undefined && allBelow(range.after)) return false;
  return range.from === undefined || !allBelow(range.from);
}

/** Order of `list()` results: by key, code point order. */
export const byKey = (a: { id: string }, b: { id: string }): number => compareKeys(a.id, b.id);
