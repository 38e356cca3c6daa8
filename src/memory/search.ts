/**
 * Ranked full-text search of memory items (MiniSearch, in process: no extra service). Each search indexes the items
 * it is given, which are few per owner; terms of three letters and more match by prefix, from four on with small typos.
 */
import MiniSearch from 'minisearch';
import type { MemoryHit, MemoryItem } from './types.ts';

/** An item to search, and whether it comes from the shared scope. */
export interface SearchableItem {
  item: MemoryItem;
  shared: boolean;
}

/** The `limit` best hits of `query` among `items`, best first; [] for a query with no term. */
export function searchItems(items: readonly SearchableItem[], query: string, limit: number): MemoryHit[] {
  if (items.length === 0 || query.trim() === '') return [];
  const index = new MiniSearch<{ key: number; text: string; tags: string }>({
    idField: 'key',
    fields: ['text', 'tags'],
    searchOptions: {
      prefix: (term) => term.length >= 3,
      fuzzy: (term) => (term.length >= 4 ? 0.2 : false),
      boost: { tags: 2 },
      combineWith: 'OR',
    },
  });
  // Keys are places in `items`: an owner's item and a shared one may share an id.
  index.addAll(items.map(({ item }, key) => ({ key, text: item.text, tags: item.tags.join(' ') })));
  return index
    .search(query)
    .slice(0, limit)
    .map((hit) => {
      const found = items[hit.id as number]!;
      return { item: found.item, score: hit.score, shared: found.shared };
    });
}
