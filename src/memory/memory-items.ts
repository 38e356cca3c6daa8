/**
 * An owner's memory items as records of their own (kept-memory.ts keeps the rest): ns `memory.items`, id
 * `<owner digest>#<item id>`, value `{ order, item }`, in the index `owner` under the digest, scored by `order`: the
 * order the item was first saved (a re-save keeps its place). Contracts:
 * - `writes` turns a batch of events into the writes of the items they change (one per item: the last state of it),
 *   and keeps the counts of the small state (`ItemCounts`) in step; kept-memory.ts commits them with the events and
 *   that state (`foldedLog`'s `also`), so an item's record and the counts never disagree. A save, forget or confirm
 *   reads and writes only the items it names.
 * - `all` reads every item in the order first saved (a page at a time); `page` a page newest first; `get` one item.
 */
import { z } from 'zod';
import type { Logger } from '../log/index.ts';
import { records } from '../store/index.ts';
import { MemoryItemSchema, ProvenanceSchema, type MemoryEvent, type MemoryItem } from './types.ts';

/** The part of an owner's kept state the items need: the caps read `count` and `chars` (service.ts). */
export const ItemCountsSchema = z.object({
  /** How many items the owner keeps. */
  count: z.number().int().nonnegative(),
  /** How many characters of text they hold. */
  chars: z.number().int().nonnegative(),
  /** The `order` the next new item gets. */
  next: z.number().int().positive(),
});
export type ItemCounts = z.infer<typeof ItemCountsSchema>;
export const noItems = (): ItemCounts => ({ count: 0, chars: 0, next: 1 });

export const PendingProfileSchema = z.object({ text: z.string(), at: z.string(), ...ProvenanceSchema.shape });

const ItemRecordSchema = z.object({ order: z.number().int().positive(), item: MemoryItemSchema });
type ItemRecord = z.infer<typeof ItemRecordSchema>;

const PAGE = 500;

/** The item an event changes (undefined: none). */
const itemIdOf = (e: MemoryEvent): string | undefined =>
  e.type === 'itemSaved' ? e.item.id : e.type === 'itemForgotten' || e.type === 'confirmed' ? e.id : undefined;

export function memoryItems(store: records.RecordStore, log: Logger) {
  const items = records.collection(store, { ns: 'memory.items', schema: ItemRecordSchema, log });
  const recordId = (digest: string, id: string) => `${digest}#${id}`;
  const put = (digest: string, value: ItemRecord): records.RecordWrite => ({
    op: 'put',
    ns: items.ns,
    id: recordId(digest, value.item.id),
    value,
    index: [{ index: 'owner', group: digest, score: value.order }],
  });
  const cursor = (r: { id: string; value: ItemRecord }) => ({ score: r.value.order, id: r.id });

  /** The writes of the items `events` change; `counts` (a copy the caller owns) follows them. */
  async function writes(digest: string, events: readonly MemoryEvent[], counts: ItemCounts) {
    const ids = [...new Set(events.flatMap((e) => itemIdOf(e) ?? []))];
    if (ids.length === 0) return [];
    const found = await items.getMany(ids.map((id) => recordId(digest, id)));
    const now = new Map(ids.map((id, i) => [id, found[i]?.value]));
    const changed = new Set<string>();
    for (const e of events) {
      const id = itemIdOf(e);
      const was = id === undefined ? undefined : now.get(id);
      if (e.type === 'itemSaved') {
        if (!was) counts.count += 1;
        counts.chars += e.item.text.length - (was?.item.text.length ?? 0);
        now.set(e.item.id, { order: was?.order ?? counts.next++, item: e.item });
      } else if (was && e.type === 'itemForgotten') {
        counts.count -= 1;
        counts.chars -= was.item.text.length;
        now.set(e.id, undefined);
      } else if (was?.item.unconfirmed && e.type === 'confirmed') {
        const { unconfirmed: _confirmed, ...item } = was.item;
        now.set(was.item.id, { order: was.order, item });
      } else continue;
      changed.add(id!);
    }
    return [...changed].map((id) => {
      const value = now.get(id);
      return value ? put(digest, value) : items.writes.delete(recordId(digest, id));
    });
  }

  /** Every item record of the owner in the order first saved, a page at a time. */
  async function* pages(digest: string) {
    for (let after: { score: number; id: string } | undefined; ;) {
      const got = await items.query({ index: 'owner', group: digest, limit: PAGE, ...(after && { after }) });
      if (got.length > 0) yield got;
      const end = got.at(-1);
      if (got.length < PAGE || !end) return;
      after = cursor(end);
    }
  }

  return {
    writes,
    async all(digest: string): Promise<MemoryItem[]> {
      const all: MemoryItem[] = [];
      for await (const got of pages(digest)) all.push(...got.map((r) => r.value.item));
      return all;
    },
    /** Up to `limit` items newest first, from the one after `after` (from the newest when it is gone). */
    async page(digest: string, p: { limit: number; after?: string | undefined }) {
      const from = p.after === undefined ? undefined : await items.get(recordId(digest, p.after));
      const got = await items.query({
        index: 'owner',
        group: digest,
        reverse: true,
        limit: p.limit + 1,
        ...(from && { after: cursor(from) }),
      });
      return { items: got.slice(0, p.limit).map((r) => r.value.item), more: got.length > p.limit };
    },
    get: async (digest: string, id: string) => (await items.get(recordId(digest, id)))?.value.item,
    /** Deletes of every item record of the owner (for the commit that erases its state). */
    async eraseWrites(digest: string): Promise<records.RecordWrite[]> {
      const all = await store.query({ ns: items.ns, index: 'owner', group: digest }); // those that fit no schema too
      return all.map((r) => items.writes.delete(r.id));
    },
  };
}
export type MemoryItems = ReturnType<typeof memoryItems>;
