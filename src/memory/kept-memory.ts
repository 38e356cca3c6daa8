/**
 * Memory on the record store (src/store/records): each owner's log with its fold kept beside it (`foldedLog`, ns
 * `memory`), and the items' embeddings as records of their own (ns `memory.vectors`, grouped by owner), so a call
 * reads the kept state — one version read when it did not change — and never the whole log again.
 * Contracts:
 * - Owners are named by their digest (`ownerDigest`): no owner's name reaches a record id or a Redis key.
 * - `state(owner)` is the fold of every event appended (items in the order first saved, the profile); it is
 *   deep-frozen, shared with other callers. `append` commits events and the new state at once (any instance).
 * - An `itemEmbedded` event is kept as its item's vector record, not in the log; saving an item again or forgetting
 *   it removes its vector (an older vector no longer describes it). `vectors(owner)` reads the owner's vectors.
 * - Memory kept before the record store (`legacy`: the per-owner JSONL files or Redis streams) is moved over the
 *   first time an owner is read here (once per process and owner; a legacy log read again elsewhere is appended as
 *   the same events, which fold to the same state), and `erase` removes it there too.
 * - `erase` leaves nothing of the owner's memory on the medium when it resolves (the record store's `purge`).
 */
import type { Logger } from '../log/index.ts';
import { records } from '../store/index.ts';
import { z } from 'zod';
import {
  MemoryEventSchema,
  MemoryItemSchema,
  ownerDigest,
  ProvenanceSchema,
  type MemoryEvent,
  type MemoryLogStore,
} from './types.ts';

/** An owner's memory as its log folds into it: plain JSON, kept as a record. */
export const MemoryStateSchema = z.object({
  /** In the order they were first saved (a re-save keeps its place). */
  items: z.array(MemoryItemSchema),
  /** The working-memory profile ('' when none): the confirmed one, which the system prompt shows. */
  profile: z.string(),
  /** A profile written unconfirmed (`memory.afterToolOutput`), waiting to be confirmed. */
  pending: z.object({ text: z.string(), at: z.string(), ...ProvenanceSchema.shape }).optional(),
});
export type MemoryState = z.infer<typeof MemoryStateSchema>;

export const emptyMemory = (): MemoryState => ({ items: [], profile: '' });

/** Applies one event to `state` (a copy the fold owns: changed in place) and returns it. */
export function evolveMemory(state: MemoryState, event: MemoryEvent): MemoryState {
  switch (event.type) {
    case 'itemSaved': {
      const at = state.items.findIndex((i) => i.id === event.item.id);
      if (at < 0) state.items.push(event.item);
      else state.items[at] = event.item;
      break;
    }
    case 'itemForgotten':
      state.items = state.items.filter((i) => i.id !== event.id);
      break;
    case 'profileSet': {
      const { type: _type, text, at, ...origin } = event;
      if (origin.unconfirmed) state.pending = { text, at, ...origin };
      else {
        state.profile = text;
        delete state.pending;
      }
      break;
    }
    case 'confirmed':
      if (event.id === undefined) {
        if (state.pending) state.profile = state.pending.text;
        delete state.pending;
      } else
        state.items = state.items.map((i) => {
          if (i.id !== event.id) return i;
          const { unconfirmed: _confirmed, ...rest } = i;
          return rest;
        });
      break;
    case 'itemEmbedded': // kept as a vector record, not folded
      break;
  }
  return state;
}

/** Items newest first (the last saved first). */
export const newestFirst = (state: MemoryState) => [...state.items].reverse();

const VectorSchema = z.object({ model: z.string(), vector: z.array(z.number()) });
export type StoredVector = z.infer<typeof VectorSchema>;

export interface KeptMemory {
  state(owner: string): Promise<MemoryState>;
  append(owner: string, events: readonly MemoryEvent[]): Promise<MemoryState>;
  /** The owner's item vectors by item id. */
  vectors(owner: string): Promise<Map<string, StoredVector>>;
  /** Removes every record of the owner (its log, state and vectors, and its legacy log). */
  erase(owner: string): Promise<void>;
}

const VECTOR_PAGE = 500;

export function createKeptMemory(deps: {
  records: records.RecordStore;
  legacy?: MemoryLogStore | undefined;
  log: Logger;
}): KeptMemory {
  const { log } = deps;
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

  /** Owners whose legacy log was looked at by this process (moved over, or found empty). */
  const moved = new Map<string, Promise<void>>();
  const moveLegacy = (owner: string, digest: string): Promise<void> => {
    const legacy = deps.legacy;
    if (!legacy) return Promise.resolve();
    let moving = moved.get(digest);
    if (!moving) {
      moving = (async () => {
        if ((await folded.events(digest, { limit: 1 })).length > 0) return;
        const events = await legacy.read(owner);
        if (events.length === 0) return;
        await folded.append(digest, await keepVectors(digest, events));
        log.info({ events: events.length }, 'memory: an owner kept before the record store was moved onto it');
      })();
      moved.set(digest, moving);
      moving.catch(() => moved.delete(digest)); // tried again at the next call
    }
    return moving;
  };

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
    async state(owner) {
      const digest = ownerDigest(owner);
      await moveLegacy(owner, digest);
      return folded.state(digest);
    },
    async append(owner, events) {
      const digest = ownerDigest(owner);
      await moveLegacy(owner, digest);
      return folded.append(digest, await keepVectors(digest, events));
    },
    async vectors(owner) {
      const digest = ownerDigest(owner);
      await moveLegacy(owner, digest);
      return readVectors(digest);
    },
    async erase(owner) {
      const digest = ownerDigest(owner);
      await deps.legacy?.erase(owner); // first: nothing is moved over again meanwhile
      moved.set(digest, Promise.resolve());
      await folded.erase(digest);
      const ids = [...(await readVectors(digest)).keys()].map((id) => vectorId(digest, id));
      if (ids.length > 0) await deps.records.commit(ids.map((id) => vectorRecords.writes.delete(id)));
      await deps.records.purge(); // nothing of the owner's memory is left on disk
    },
  };
}
