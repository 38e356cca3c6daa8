/**
 * Memory on the record store (src/store/records): each owner's log with a small fold kept beside it (`foldedLog`, ns
 * `memory`: the profile, the pending profile and the items' counts), each item a record of its own (memory-items.ts,
 * ns `memory.items`) and each item's embedding too (ns `memory.vectors`), all grouped by owner. A call reads the kept
 * state — one version read when it did not change — or the item records it needs, and never the whole log again.
 * Contracts:
 * - Owners are named by their digest (`ownerDigest`): no owner's name reaches a record id or a Redis key.
 * - `state(owner)` is the small fold (never an item); it is deep-frozen, shared with other callers. `append` commits
 *   the events, the records of the items they change and the new state at once (any instance); its `check` sees the
 *   new state before the commit and refuses by throwing (nothing written), as exact as the commit itself.
 * - `items` is every item in the order first saved (a re-save keeps its place); `page` newest first; `item` one.
 * - An `itemEmbedded` event is kept as its item's vector record, not in the log; saving an item again or forgetting
 *   it removes its vector (an older vector no longer describes it). `vectors(owner)` reads the owner's vectors.
 * - `erase` leaves nothing of the owner's memory on the medium when it resolves (the record store's `purge`).
 */
import type { Logger } from '../log/index.ts';
import { records } from '../store/index.ts';
import { z } from 'zod';
import { ItemCountsSchema, memoryItems, noItems, PendingProfileSchema } from './memory-items.ts';
import { MemoryEventSchema, ownerDigest, type MemoryEvent, type MemoryItem } from './types.ts';

/** An owner's kept state: what its log folds into, but its items (records of their own); plain JSON. */
export const MemoryStateSchema = z.object({
  /** The working-memory profile ('' when none): the confirmed one, which the system prompt shows. */
  profile: z.string(),
  /** A profile written unconfirmed (`memory.afterToolOutput`), waiting to be confirmed. */
  pending: PendingProfileSchema.optional(),
  ...ItemCountsSchema.shape,
});
export type MemoryState = z.infer<typeof MemoryStateSchema>;

export const emptyMemory = (): MemoryState => ({ profile: '', ...noItems() });

/** Applies one event's profile change to `state` (a copy the fold owns: changed in place); items: memory-items.ts. */
export function evolveMemory(state: MemoryState, event: MemoryEvent): MemoryState {
  if (event.type === 'profileSet') {
    const { type: _type, text, at, ...origin } = event;
    if (origin.unconfirmed) state.pending = { text, at, ...origin };
    else {
      state.profile = text;
      delete state.pending;
    }
  } else if (event.type === 'confirmed' && event.id === undefined) {
    if (state.pending) state.profile = state.pending.text;
    delete state.pending;
  }
  return state;
}

const VectorSchema = z.object({ model: z.string(), vector: z.array(z.number()) });
export type StoredVector = z.infer<typeof VectorSchema>;

export interface KeptMemory {
  state(owner: string): Promise<MemoryState>;
  /** `check` (module doc) throws to refuse the new state. */
  append(owner: string, events: readonly MemoryEvent[], check?: (state: MemoryState) => void): Promise<MemoryState>;
  /** Every item, in the order first saved. */
  items(owner: string): Promise<MemoryItem[]>;
  /** Up to `limit` items newest first, from the one after `after` (from the newest when it is gone). */
  page(
    owner: string,
    page: { limit: number; after?: string | undefined },
  ): Promise<{ items: MemoryItem[]; more: boolean }>;
  item(owner: string, id: string): Promise<MemoryItem | undefined>;
  /** The owner's item vectors by item id. */
  vectors(owner: string): Promise<Map<string, StoredVector>>;
  /** Removes every record of the owner (its log, state and vectors). */
  erase(owner: string): Promise<void>;
}

const VECTOR_PAGE = 500;

export function createKeptMemory(deps: { records: records.RecordStore; log: Logger }): KeptMemory {
  const { log } = deps;
  const items = memoryItems(deps.records, log);
  const folded = records.foldedLog(deps.records, {
    ns: 'memory',
    eventSchema: MemoryEventSchema,
    stateSchema: MemoryStateSchema,
    initial: emptyMemory(),
    evolve: evolveMemory,
    log,
  });
  const vectorRecords = records.collection(deps.records, { ns: 'memory.vectors', schema: VectorSchema, log });
  const vectorId = (digest: string, itemId: string) => `${digest}#${itemId}`;
  const byOwner = (digest: string) => [{ index: 'owner', group: digest, score: 0 }];

  /** Keeps the vectors of `events` and drops those their items' re-saves and forgets outdate; the rest to fold. */
  async function keepVectors(digest: string, events: readonly MemoryEvent[]): Promise<MemoryEvent[]> {
    const writes: records.RecordWrite[] = [];
    for (const e of events) {
      if (e.type === 'itemEmbedded')
        writes.push({
          op: 'put',
          ns: vectorRecords.ns,
          id: vectorId(digest, e.id),
          value: { model: e.model, vector: e.vector } satisfies StoredVector,
          index: byOwner(digest),
        });
      else if (e.type === 'itemSaved' || e.type === 'itemForgotten') {
        const id = vectorId(digest, e.type === 'itemSaved' ? e.item.id : e.id);
        if (await deps.records.version(vectorRecords.ns, id)) writes.push(vectorRecords.writes.delete(id));
      }
    }
    // One write per record in a commit: the last of an id wins.
    const last = new Map(writes.map((w) => [w.id, w]));
    if (last.size > 0) await deps.records.commit([...last.values()]);
    return events.filter((e) => e.type !== 'itemEmbedded');
  }

  /** Commits `events` with the records of the items they change (memory-items.ts) and the new state. */
  const commit = (digest: string, events: readonly MemoryEvent[], check?: (state: MemoryState) => void) =>
    folded.append(digest, events, async (state) => {
      const writes = await items.writes(digest, events, state);
      check?.(state);
      return writes;
    });

  /** The owner's vectors, a page at a time. */
  async function readVectors(digest: string): Promise<Map<string, StoredVector>> {
    const found = new Map<string, StoredVector>();
    const prefix = `${digest}#`;
    for (let after: { score: number; id: string } | undefined; ;) {
      const page = await vectorRecords.query({
        index: 'owner',
        group: digest,
        limit: VECTOR_PAGE,
        ...(after && { after }),
      });
      for (const v of page) found.set(v.id.slice(prefix.length), v.value);
      const end = page.at(-1);
      if (page.length < VECTOR_PAGE || !end) return found;
      after = { score: 0, id: end.id };
    }
  }

  return {
    state: (owner) => folded.state(ownerDigest(owner)),
    async append(owner, events, check) {
      const digest = ownerDigest(owner);
      return commit(digest, await keepVectors(digest, events), check);
    },
    items: (owner) => items.all(ownerDigest(owner)),
    page: (owner, page) => items.page(ownerDigest(owner), page),
    item: (owner, id) => items.get(ownerDigest(owner), id),
    vectors: (owner) => readVectors(ownerDigest(owner)),
    async erase(owner) {
      const digest = ownerDigest(owner);
      await folded.erase(digest, async () => [
        ...(await items.eraseWrites(digest)),
        ...[...(await readVectors(digest)).keys()].map((id) => vectorRecords.writes.delete(vectorId(digest, id))),
      ]);
      await deps.records.purge(); // nothing of the owner's memory is left on disk
    },
  };
}
