/**
 * One index group in memory: its entries kept sorted by (score, id in code point order) in an array, found by binary
 * search. A change costs O(log n) to find and one move of the entries after it (memmove: a group of 100 000 entries
 * takes microseconds), a range costs O(log n) plus what it answers; no query sorts.
 */
import { compareKeys } from '../session-range.ts';

export interface Entry {
  score: number;
  id: string;
}

const compare = (a: Entry, b: Entry): number =>
  a.score !== b.score ? (a.score < b.score ? -1 : 1) : compareKeys(a.id, b.id);

export interface Range {
  min?: number | undefined;
  max?: number | undefined;
  reverse?: boolean | undefined;
  after?: Entry | undefined;
  limit?: number | undefined;
}

export class SortedIndex {
  private readonly entries: Entry[] = [];

  get size(): number {
    return this.entries.length;
  }

  /** The first entry (the lowest), if any. */
  first(): Entry | undefined {
    return this.entries[0];
  }

  /** The position of the first entry for which `before` is false (`before` holds for a prefix of the entries). */
  private boundary(before: (e: Entry) => boolean): number {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(this.entries[mid] as Entry)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The position of the first entry not before `probe`. */
  private lowerBound(probe: Entry): number {
    return this.boundary((e) => compare(e, probe) < 0);
  }

  insert(entry: Entry): void {
    this.entries.splice(this.lowerBound(entry), 0, entry);
  }

  remove(entry: Entry): void {
    const at = this.lowerBound(entry);
    const found = this.entries[at];
    if (found && found.score === entry.score && found.id === entry.id) this.entries.splice(at, 1);
  }

  /** The entries of a range in its order. */
  range(r: Range): Entry[] {
    const out: Entry[] = [];
    const limit = r.limit ?? Infinity;
    const min = r.min ?? -Infinity;
    const max = r.max ?? Infinity;
    if (!r.reverse) {
      let i = this.boundary((e) => e.score < min);
      if (r.after) i = Math.max(i, this.lowerBound(r.after));
      for (; i < this.entries.length && out.length < limit; i++) {
        const e = this.entries[i] as Entry;
        if (e.score > max) break;
        if (r.after && compare(e, r.after) <= 0) continue;
        out.push(e);
      }
      return out;
    }
    // Descending: from the last entry with score <= max (and before the cursor) down.
    let i = this.boundary((e) => e.score <= max);
    if (r.after) i = Math.min(i, this.lowerBound(r.after));
    for (i -= 1; i >= 0 && out.length < limit; i--) {
      const e = this.entries[i] as Entry;
      if (e.score < min) break;
      out.push(e);
    }
    return out;
  }
}
