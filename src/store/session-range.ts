/**
 * The order sessions are listed in, and the ranges a listing asks for (`EventStore.list`).
 *
 * Contracts:
 * - Sessions are ordered by key in code point order, which is the order of the keys' UTF-8 bytes:
 *   the order Redis keeps a sorted set's members in (ZRANGEBYLEX), so every engine lists alike. (It
 *   differs from JavaScript's `<`, code-unit order, only between a character above U+FFFF and one
 *   in U+E000–U+FFFF.)
 * - A range holds the keys `k` with `after < k`, `from <= k` and `k < below` (each bound optional);
 *   `limit` caps how many are answered, the first ones in that order.
 * - Paging by key (the next page starts after the last key of the previous one) neither skips nor
 *   repeats a session that exists throughout, whatever is created or deleted between pages.
 */
import type { SessionRange } from './types.ts';

/** Code point order of two strings (the order of their UTF-8 bytes). */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate (half of a character above U+FFFF) sorts after every other code unit.
    return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** Code units in code point order: surrogates (D800–DFFF) move above E000–FFFF. */
const codePointRank = (unit: number): number => (unit >= 0xe000 ? unit - 0x800 : unit >= 0xd800 ? unit + 0x2000 : unit);

/** Whether `key` lies in the range (its bounds; `limit` aside). */
export function inRange(key: string, range: SessionRange | undefined): boolean {
  if (!range) return true;
  if (range.after !== undefined && compareKeys(key, range.after) <= 0) return false;
  if (range.from !== undefined && compareKeys(key, range.from) < 0) return false;
  return range.below === undefined || compareKeys(key, range.below) < 0;
}

/**
 * Whether some key starting with `prefix` may lie in the range: false only when every such key
 * falls below its lower bounds or at or above `below` (a file name that keeps only the start of its
 * key, src/store/session-file-name.ts, is skipped without being read).
 */
export function mayHoldPrefix(prefix: string, range: SessionRange | undefined): boolean {
  if (!range) return true;
  if (range.below !== undefined && compareKeys(prefix, range.below) >= 0) return false; // every such key ≥ prefix ≥ below
  // Every key starting with `prefix` is below `bound` when prefix < bound and bound does not start with prefix.
  const allBelow = (bound: string) => compareKeys(prefix, bound) < 0 && !bound.startsWith(prefix);
  if (range.after !== undefined && allBelow(range.after)) return false;
  return range.from === undefined || !allBelow(range.from);
}

/** The sessions of `sorted` (in key order) that the range asks for. */
export function pageOf<T extends { id: string }>(sorted: readonly T[], range: SessionRange | undefined): T[] {
  const out: T[] = [];
  for (const item of sorted) {
    if (range?.limit !== undefined && out.length >= range.limit) break;
    if (inRange(item.id, range)) out.push(item);
  }
  return out;
}

/** Order of `list()` results: by key, code point order. */
export const byKey = (a: { id: string }, b: { id: string }): number => compareKeys(a.id, b.id);
