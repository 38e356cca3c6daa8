/**
 * The memory service (MemoryService, types.ts): what the REST routes and the model's tools use. It reads the owner's
 * small kept state (kept-memory.ts: the profile and the items' counts, kept beside the log on the record store) or
 * the item records it needs, never the log; instances sharing a Redis see each other's writes at once.
 * - `save` and `setProfile` check their input (INVALID_REQUEST with `details.field`): an item's text is 1 to
 *   MEMORY_ITEM_MAX_CHARS characters, at most MEMORY_TAGS_MAX tags; the profile at most `profileMaxChars`; an owner
 *   keeps at most `maxItems` items and `maxChars` characters of them (`reason: "memory_full"`).
 * - A model's write records its origin (session, turn, call, whether a tool's output came before it in the turn);
 *   one after a tool's output is unconfirmed under `afterToolOutput: unconfirmed` (an item marked so, a profile kept
 *   pending: the prompt keeps the confirmed one) until `confirm`.
 * - `search` ranks the owner's items and the shared scope's (SHARED_OWNER), each hit saying which it is: by full
 *   text, fused with semantic similarity when an `embedder` is given (hybrid.ts); an embedder that fails leaves full
 *   text alone. `save` stores the item's embedding beside it (`itemEmbedded`); an item whose embedding failed (or
 *   that has only another model's) is found by its text until a search whose query was embedded embeds it too.
 * - `erase` removes the owner's log from the store, then appends an audit record (who, whose, when, how much).
 * - Nothing here logs an item's or a profile's text.
 */
import type { Clock, IdSource } from '../clock.ts';
import { isoNow } from '../clock.ts';
import type { MemoryConfig } from '../config/index.ts';
import { AppError, messageOf } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import type { KeptMemory, MemoryState } from './kept-memory.ts';
import { fuse, semanticRanking } from './hybrid.ts';
import { searchItems } from './search.ts';
import {
  SHARED_OWNER,
  type MemoryAuditLog,
  type MemoryEmbedder,
  type MemoryEvent,
  type MemoryItem,
  type MemoryService,
  type Provenance,
  type WriteOrigin,
} from './types.ts';

export const MEMORY_ITEM_MAX_CHARS = 4000;
export const MEMORY_TAGS_MAX = 20;
export const MEMORY_TAG_MAX_CHARS = 64;
/** How many items without a vector one search embeds (one call to the embeddings API). */
const BACKFILL_MAX = 32;

export interface MemoryServiceDeps {
  /** Each owner's log with its fold kept (the record store). */
  kept: KeptMemory;
  audit: MemoryAuditLog;
  config: Pick<
    NonNullable<MemoryConfig>,
    'profileMaxChars' | 'searchLimit' | 'maxItems' | 'maxChars' | 'afterToolOutput'
  >;
  clock: Clock;
  /** Item ids: unique across instances and restarts. */
  ids: IdSource;
  /** Semantic search (`memory.embeddings`); absent: full text only. */
  embedder?: MemoryEmbedder | undefined;
  /** Where a failed embedding is reported (never with a text). */
  log?: Logger | undefined;
}

const invalid = (field: string, message: string, details: Record<string, unknown> = {}) =>
  new AppError('INVALID_REQUEST', message, { field, ...details });

function checkItem(text: string, tags: readonly string[]): void {
  if (text.trim() === '') throw invalid('text', 'A memory item needs some text');
  if (text.length > MEMORY_ITEM_MAX_CHARS)
    throw invalid(
      'text',
      `A memory item holds at most ${MEMORY_ITEM_MAX_CHARS} characters (this one: ${text.length})`,
      {
        limit: MEMORY_ITEM_MAX_CHARS,
      },
    );
  if (tags.length > MEMORY_TAGS_MAX)
    throw invalid('tags', `A memory item has at most ${MEMORY_TAGS_MAX} tags`, { limit: MEMORY_TAGS_MAX });
  if (tags.some((t) => t.trim() === '' || t.length > MEMORY_TAG_MAX_CHARS))
    throw invalid('tags', `A tag is 1 to ${MEMORY_TAG_MAX_CHARS} characters`, { limit: MEMORY_TAG_MAX_CHARS });
}

/** What a write records of its origin; after a tool's output under `afterToolOutput: unconfirmed`, unconfirmed. */
function provenance(origin: WriteOrigin | undefined, config: MemoryServiceDeps['config']): Provenance {
  if (!origin) return {};
  const { sessionId, turnId, callId, afterToolOutput } = origin;
  return {
    ...(sessionId !== undefined && { sessionId }),
    ...(turnId !== undefined && { turnId }),
    ...(callId !== undefined && { callId }),
    ...(afterToolOutput && { afterToolOutput: true }),
    ...(afterToolOutput && config.afterToolOutput === 'unconfirmed' && { unconfirmed: true }),
  };
}

/**
 * Refuses the state a save leads to past `maxItems` or `maxChars` (INVALID_REQUEST, `reason: memory_full`): checked
 * in the save's commit (kept-memory.ts `append`), so concurrent saves never pass a cap together.
 */
function checkRoom(state: MemoryState, config: MemoryServiceDeps['config']): void {
  const full = (what: string, limit: number) =>
    invalid('text', `Memory is full: at most ${limit} ${what}. Forget something first.`, {
      reason: 'memory_full',
      limit,
    });
  if (state.count > config.maxItems) throw full('items', config.maxItems);
  if (state.chars > config.maxChars) throw full('characters of items', config.maxChars);
}

export function createMemoryService(deps: MemoryServiceDeps): MemoryService {
  const { kept, audit, config, clock, ids, embedder } = deps;
  const stateOf = (owner: string) => kept.state(owner);
  const append = (owner: string, ...events: MemoryEvent[]) => kept.append(owner, events);
  /** Whether the last embeddings call failed: one warning per failure streak. */
  let failing = false;
  /** The embeddings of `texts`, or undefined when the provider failed (reported once per streak). */
  const embed = async (embedding: MemoryEmbedder, texts: string[]): Promise<number[][] | undefined> => {
    try {
      const vectors = await embedding.embed(texts);
      if (failing) deps.log?.info({ model: embedding.model }, 'memory: embeddings answer again');
      failing = false;
      return vectors;
    } catch (err) {
      if (!failing)
        deps.log?.warn({ model: embedding.model, err: messageOf(err) }, 'memory: embeddings failed; full text only');
      failing = true;
      return undefined;
    }
  };
  /** An owner's items (newest first) as search candidates, with their vectors of the embedder's model. */
  const candidates = async (owner: string, shared: boolean) => {
    const items = (await kept.items(owner)).reverse();
    const vectors = embedder ? await kept.vectors(owner) : new Map<string, never>();
    return items.map((item) => {
      const stored = vectors.get(item.id);
      return { item, shared, vector: stored?.model === embedder?.model ? stored?.vector : undefined };
    });
  };
  type Candidate = Awaited<ReturnType<typeof candidates>>[number];
  /**
   * Items without a vector of the embedder's model (saved while its API failed, or under another model) get one, at
   * most BACKFILL_MAX per search, stored as if saved so: semantic search reaches them from then on.
   */
  const backfill = async (embedding: MemoryEmbedder, owner: string, all: Candidate[]): Promise<void> => {
    const missing = all.filter((c) => !c.vector).slice(0, BACKFILL_MAX);
    if (missing.length === 0) return;
    const vectors = await embed(
      embedding,
      missing.map((c) => c.item.text),
    );
    if (!vectors) return;
    const at = isoNow(clock);
    missing.forEach((c, i) => (c.vector = vectors[i]));
    const embedded = (shared: boolean): MemoryEvent[] =>
      missing.flatMap((c) =>
        c.shared === shared && c.vector
          ? [{ type: 'itemEmbedded', at, id: c.item.id, model: embedding.model, vector: c.vector }]
          : [],
      );
    for (const shared of [false, true]) {
      const events = embedded(shared);
      if (events.length > 0) await kept.append(shared ? SHARED_OWNER : owner, events);
    }
  };
  return {
    list: async (owner) => (await kept.items(owner)).reverse(),
    page: (owner, page) => kept.page(owner, page),
    async save(owner, input, origin) {
      const tags = input.tags ?? [];
      checkItem(input.text, tags);
      const at = isoNow(clock);
      const item: MemoryItem = {
        id: ids(),
        text: input.text,
        tags: [...new Set(tags)],
        ...provenance(origin, config),
        createdAt: at,
        updatedAt: at,
      };
      await kept.append(owner, [{ type: 'itemSaved', at, item }], (state) => checkRoom(state, config));
      const vector = embedder && (await embed(embedder, [item.text]))?.[0];
      if (embedder && vector)
        await append(owner, { type: 'itemEmbedded', at: isoNow(clock), id: item.id, model: embedder.model, vector });
      return item;
    },
    async confirm(owner, id) {
      const item = id === undefined ? undefined : await kept.item(owner, id);
      if (id !== undefined && !item) return false;
      if (id === undefined ? (await stateOf(owner)).pending : item?.unconfirmed)
        await append(owner, { type: 'confirmed', at: isoNow(clock), ...(id !== undefined && { id }) });
      return true;
    },
    async forget(owner, id) {
      if (!(await kept.item(owner, id))) return false;
      await append(owner, { type: 'itemForgotten', at: isoNow(clock), id });
      return true;
    },
    async search(owner, query, limit = config.searchLimit) {
      const all = [
        ...(await candidates(owner, false)),
        ...(owner === SHARED_OWNER ? [] : await candidates(SHARED_OWNER, true)),
      ];
      // Nothing to rank asks nothing of the embeddings API.
      const semantic = embedder && all.length > 0 && query.trim() !== '';
      const queryVector = semantic ? (await embed(embedder, [query]))?.[0] : undefined;
      if (!embedder || !queryVector) return searchItems(all, query, limit);
      await backfill(embedder, owner, all);
      return fuse(searchItems(all, query, Infinity), semanticRanking(all, queryVector), limit);
    },
    profile: async (owner) => (await stateOf(owner)).profile,
    pendingProfile: async (owner) => (await stateOf(owner)).pending,
    async setProfile(owner, text, origin) {
      if (text.length > config.profileMaxChars)
        throw invalid(
          'text',
          `The profile is ${text.length} characters; memory.profileMaxChars allows ${config.profileMaxChars}: keep what matters most and shorten the rest`,
          { limit: config.profileMaxChars, length: text.length },
        );
      await append(owner, { type: 'profileSet', at: isoNow(clock), text, ...provenance(origin, config) });
    },
    async export(owner) {
      const { profile } = await stateOf(owner);
      return { owner, exportedAt: isoNow(clock), profile, items: (await kept.items(owner)).reverse() };
    },
    async erase(owner, by) {
      const state = await stateOf(owner);
      const erased = { items: state.count, profile: state.profile !== '' };
      await kept.erase(owner);
      await audit.record({ type: 'memoryErased', at: isoNow(clock), by, owner, ...erased });
      return erased;
    },
  };
}
