/**
 * Semantic memory search (issue 62, `memory.embeddings.model`): vectors from the llm provider's embeddings API
 * (OpenAI's `POST <baseURL>/embeddings` shape), stored as `itemEmbedded` events beside the items, and a hybrid
 * ranking of full-text score and cosine similarity.
 *
 * Contracts:
 * - Nothing here rejects because of the embeddings API: a failed call is no vector. An item saved meanwhile is
 *   embedded by a later search of its owner (at most BACKFILL_MAX per search, stored then); a search whose query
 *   cannot be embedded is the full-text search. One warning per failure streak (the next success ends it).
 * - Only vectors of the configured model count (a changed model is embedded again, item by item).
 * - Hybrid score: half the full-text score (relative to the best one), half the cosine similarity (clipped at 0);
 *   an item with no full-text match needs a similarity of at least MIN_SIMILARITY to be a hit.
 * - Shared items (SHARED_OWNER) are read, never written, by an owner's search: their missing vectors are computed
 *   for the search and not stored.
 */
import { z } from 'zod';
import type { Logger } from '../log/index.ts';
import type { FetchLike } from '../proxy.ts';
import type { MemoryState } from './fold.ts';
import { searchItems, type SearchableItem } from './search.ts';
import type { MemoryEvent, MemoryHit, MemoryItem } from './types.ts';

export const MIN_SIMILARITY = 0.3;
export const BACKFILL_MAX = 32;

export interface EmbedderOptions {
  /** The llm provider's endpoint, up to `/embeddings` (llm.baseURL or the preset's). */
  baseURL: string;
  apiKey: string;
  model: string;
  timeoutMs: number;
  fetch: FetchLike;
}

/** Vectors of texts, in order; rejects when the API fails or answers something else. */
export type Embed = (texts: readonly string[]) => Promise<number[][]>;

const AnswerSchema = z.object({
  data: z.array(z.object({ index: z.number().int(), embedding: z.array(z.number()) })),
});

/** A client of OpenAI's embeddings API. */
export function createEmbedder({ baseURL, apiKey, model, timeoutMs, fetch }: EmbedderOptions): Embed {
  const url = `${baseURL.replace(/\/+$/, '')}/embeddings`;
  return async (texts) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ model, input: texts, encoding_format: 'float' }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`the embeddings API answered ${res.status}`);
    }
    const { data } = AnswerSchema.parse(await res.json());
    if (data.length !== texts.length) throw new Error(`the embeddings API answered ${data.length} of ${texts.length}`);
    return [...data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
  };
}

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

/** Hybrid ranking of `candidates` (see the contracts); `similarity` of a candidate by its place, undefined: none. */
export function hybridRank(
  candidates: readonly SearchableItem[],
  fullText: readonly MemoryHit[],
  similarity: (index: number) => number | undefined,
  limit: number,
): MemoryHit[] {
  const best = Math.max(0, ...fullText.map((h) => h.score));
  const textScore = new Map(fullText.map((h) => [h.item, best === 0 ? 0 : h.score / best]));
  const hits: MemoryHit[] = [];
  candidates.forEach(({ item, shared }, i) => {
    const text = textScore.get(item) ?? 0;
    const sim = Math.max(0, similarity(i) ?? 0);
    if (text === 0 && sim < MIN_SIMILARITY) return;
    hits.push({ item, shared, score: 0.5 * text + 0.5 * sim });
  });
  return hits.sort((a, b) => b.score - a.score).slice(0, limit);
}

export interface SemanticSearchDeps {
  embed: Embed;
  model: string;
  log: Logger;
  /** Stores backfilled vectors of the owner's own items. */
  append: (owner: string, events: MemoryEvent[]) => Promise<void>;
  now: () => string;
}

export type SemanticSearch = ReturnType<typeof createSemanticSearch>;

export function createSemanticSearch(deps: SemanticSearchDeps) {
  const { model, log } = deps;
  let failing = false;
  /** Vectors of `texts`, or undefined when the API failed (warned once per streak). */
  const tryEmbed = async (texts: readonly string[]): Promise<number[][] | undefined> => {
    try {
      const vectors = await deps.embed(texts);
      if (failing) log.info({ model }, 'embeddings answer again; memory search is hybrid again');
      failing = false;
      return vectors;
    } catch (err) {
      if (!failing) log.warn({ err, model }, 'embeddings failed; memory search falls back to full text');
      failing = true;
      return undefined;
    }
  };
  const embedded = (item: MemoryItem, vector: number[]): MemoryEvent => ({
    type: 'itemEmbedded',
    at: deps.now(),
    id: item.id,
    model,
    vector,
  });

  return {
    /** The `itemEmbedded` event of a new item, or undefined when embeddings fail (a later search backfills it). */
    async embedItem(item: MemoryItem): Promise<MemoryEvent | undefined> {
      const vectors = await tryEmbed([item.text]);
      return vectors && embedded(item, vectors[0]!);
    },
    /** `owner`'s items (`own`) and the shared ones (`shared`), hybrid-ranked for `query`; full text when embeddings fail. */
    async search(
      owner: string,
      own: MemoryState,
      shared: MemoryState | undefined,
      query: string,
      limit: number,
    ): Promise<MemoryHit[]> {
      const candidates: SearchableItem[] = [
        ...[...own.items.values()].reverse().map((item) => ({ item, shared: false })),
        ...[...(shared?.items.values() ?? [])].reverse().map((item) => ({ item, shared: true })),
      ];
      if (candidates.length === 0) return [];
      const fullText = searchItems(candidates, query, candidates.length);
      const vectorOf = ({ item, shared: isShared }: SearchableItem) => {
        const v = (isShared ? shared : own)?.vectors.get(item.id);
        return v?.model === model ? v.vector : undefined;
      };
      const missing = candidates.filter((c) => vectorOf(c) === undefined).slice(0, BACKFILL_MAX);
      const vectors = await tryEmbed([query, ...missing.map((c) => c.item.text)]);
      if (!vectors) return fullText.slice(0, limit);
      const [queryVector, ...filled] = vectors;
      const late = new Map(missing.map((c, i) => [c, filled[i]!]));
      const backfill = missing.filter((c) => !c.shared).map((c) => embedded(c.item, late.get(c)!));
      if (backfill.length > 0)
        await deps
          .append(owner, backfill)
          .catch((err: unknown) => log.warn({ err }, 'storing backfilled memory vectors failed'));
      return hybridRank(
        candidates,
        fullText,
        (i) => {
          const v = vectorOf(candidates[i]!) ?? late.get(candidates[i]!);
          return v && cosine(queryVector!, v);
        },
        limit,
      );
    },
  };
}
