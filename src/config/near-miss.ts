/** "Did you mean …?" for a mistyped key or value. */

/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`: optimal string alignment. */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i]!;
    const above = rows[i - 1]!;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(above[j]! + 1, row[j - 1]! + 1, above[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        row[j] = Math.min(row[j]!, rows[i - 2]![j - 2]! + 1);
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The candidate `word` most likely meant, ignoring case: at most one edit away for words of up to 5 characters,
 * two for longer ones. Undefined when none is that close, or `word` is itself a candidate.
 */
export function nearMiss(word: string, candidates: Iterable<string>): string | undefined {
  const lower = word.toLowerCase();
  const bound = word.length <= 5 ? 1 : 2;
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    if (candidate === word) return undefined;
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance <= bound && (best === undefined || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}
