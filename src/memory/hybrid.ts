/**
 * Hybrid ranking of memory search: the full-text ranking and the semantic one (cosine similarity of the query's
 * embedding with the items'), fused by reciprocal rank (each list adds 1 / (RRF_K + rank)), so neither scale needs
 * calibrating against the other. An item below MIN_SIMILARITY is not a semantic match.
 */
import type { SearchableItem } from './search.ts';
import type { MemoryHit } from './types.ts';

const RRF_K = 60;
export const MIN_SIMILARITY = 0.2;

export function cosine(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length || a.length === 0) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** The candidates with a vector, most similar to `query` first (MIN_SIMILARITY and above). */
export function semanticRanking(
  candidates: readonly (SearchableItem & { vector?: readonly number[] | undefined })[],
  query: readonly number[],
): SearchableItem[] {
  return candidates
    .flatMap((c) => {
      const similarity = c.vector ? cosine(c.vector, query) : 0;
      return similarity >= MIN_SIMILARITY ? [{ c, similarity }] : [];
    })
    .sort((x, y) => y.similarity - x.similarity)
    .map(({ c }) => ({ item: c.item, shared: c.shared }));
}

/** The `limit` best of both rankings by reciprocal rank fusion; `score` is the fused one. */
export function fuse(text: readonly MemoryHit[], semantic: readonly SearchableItem[], limit: number): MemoryHit[] {
  const fused = new Map<SearchableItem['item'], MemoryHit>();
  const add = (found: SearchableItem, rank: number) => {
    const hit = fused.get(found.item) ?? { item: found.item, shared: found.shared, score: 0 };
    hit.score += 1 / (RRF_K + rank + 1);
    fused.set(found.item, hit);
  };
  text.forEach(add);
  semantic.forEach(add);
  return [...fused.values()].sort((a, b) => b.score - a.score).slice(0, limit);
}
