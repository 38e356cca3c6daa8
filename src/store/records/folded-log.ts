/**
 * Per-owner logs with kept folds (what memory uses): each owner's events are records of `<ns>.log` (ids
 * `<owner>#<seq>`, seq from 1, in the index `seq` under the owner), and the fold of all of them is the record
 * `<ns>.state`/`<owner>`: `{ seq, state }`, written in the same commit as the events it folds. Contracts:
 * - `append` commits the events and the new state atomically and answers that state; the state is put with the
 *   `ifVersion` it was folded from, so of concurrent appends (any instance) each lands once, folded in the order they
 *   commit (a conflict reads the state again and folds anew).
 * - `state` answers the kept fold without reading events. A per-process cache keyed by the state record's version
 *   answers an unchanged state without parsing it again: one `version` read (Redis: one HMGET of two small fields),
 *   then the record only when its version moved. What it answers is deep-frozen (shared with other callers); `evolve`
 *   may change the state it is given in place, for it is given a copy. The state must be plain JSON data.
 * - A kept state that no longer fits `stateSchema` (a new version of the feature) is folded again from the events and
 *   kept again (a warning says so). Events that do not fit `eventSchema` are skipped with a warning.
 * - `events` pages the log by seq; `erase` removes the owner's every record (events and state) in one commit.
 * - `also` (append, erase): records kept beside the state (a feature's per-item records) written in the same commit.
 *   It runs at each attempt, after the fold, and may change the new state it is given in place (append) or throw to
 *   refuse (nothing is written); what it reads is as of the state's version, for the commit is conditioned on it (a
 *   conflict runs it again), so records written only through `also` stay exactly in step with the state.
 * Owner names appear in ids and Redis keys: a feature that must not show them passes a digest.
 */
import { z } from 'zod';
import { AppError } from '../../errors/index.ts';
import type { Logger } from '../../log/index.ts';
import { deepFreeze } from '../stored-event.ts';
import { collection } from './collection.ts';
import type { RecordStore, RecordWrite, StoredRecord } from './types.ts';

/** More writes for an append's commit (module doc): `state` is the new state, which it may change in place. */
export type AlsoOnAppend<S> = (state: S, from: S) => Promise<readonly RecordWrite[]>;

export interface FoldedLog<E, S> {
  append(owner: string, events: readonly E[], also?: AlsoOnAppend<S>): Promise<S>;
  state(owner: string): Promise<S>;
  /** The owner's events with seq > `after` (default 0), oldest first, at most `limit`. */
  events(owner: string, page?: { after?: number; limit?: number }): Promise<{ seq: number; event: E }[]>;
  /** Removes every record of the owner; answers how many events there were. */
  erase(owner: string, also?: () => Promise<readonly RecordWrite[]>): Promise<number>;
}

interface Kept<S> {
  version: number;
  seq: number;
  state: S;
}

const ATTEMPTS = 100;
/** An event record's seq (its id is `<owner>#<seq>`). */
const seqOf = (record: StoredRecord | undefined): number =>
  record ? Number(record.id.slice(record.id.lastIndexOf('#') + 1)) : 0;
const PAGE = 1000;

export function foldedLog<ES extends z.ZodType, SS extends z.ZodType>(
  store: RecordStore,
  options: {
    ns: string;
    eventSchema: ES;
    stateSchema: SS;
    initial: z.output<SS>;
    evolve: (state: z.output<SS>, event: z.output<ES>) => z.output<SS>;
    log: Logger;
    /** How many owners' states the cache keeps (default 1000), the least recently used dropped first. */
    cacheSize?: number;
  },
): FoldedLog<z.output<ES>, z.output<SS>> {
  type E = z.output<ES>;
  type S = z.output<SS>;
  const { log } = options;
  const events = collection(store, { ns: `${options.ns}.log`, schema: options.eventSchema, log });
  const states = collection(store, {
    ns: `${options.ns}.state`,
    schema: z.object({ seq: z.number().int().nonnegative(), state: options.stateSchema }) as unknown as z.ZodType<{
      seq: number;
      state: S;
    }>,
    log,
  });
  const initial: Kept<S> = { version: 0, seq: 0, state: deepFreeze(structuredClone(options.initial)) };
  const cache = new Map<string, Kept<S>>();
  const remember = (owner: string, kept: Kept<S>): Kept<S> => {
    cache.delete(owner);
    cache.set(owner, kept);
    if (cache.size > (options.cacheSize ?? 1000)) cache.delete(cache.keys().next().value as string);
    return kept;
  };
  const fold = (from: S, list: readonly E[]): S => list.reduce(options.evolve, structuredClone(from));
  const eventWrite = (owner: string, seq: number, event: E): RecordWrite => ({
    op: 'put',
    ns: events.ns,
    id: `${owner}#${seq}`,
    value: event,
    ifVersion: 0,
    index: [{ index: 'seq', group: owner, score: seq }],
  });
  /** A page of the owner's event records (unchecked: paging goes on past one that does not fit the schema). */
  const page = (owner: string, after: number, limit?: number) =>
    store.query({ ns: events.ns, index: 'seq', group: owner, min: after + 1, ...(limit !== undefined && { limit }) });
  /** Every event record of the owner, a page at a time. */
  async function* all(owner: string): AsyncGenerator<StoredRecord[]> {
    for (let got = await page(owner, 0, PAGE); got.length > 0; got = await page(owner, seqOf(got.at(-1)), PAGE))
      yield got;
  }
  const checked = (records: StoredRecord[]): E[] => records.flatMap((r) => events.check(r)?.value ?? []);

  /** Every event's fold, kept again in place of a state that does not fit the schema. */
  async function refold(owner: string, version: number): Promise<Kept<S>> {
    log.warn({ ns: options.ns }, 'record store: a kept state does not fit its schema; folding the log again');
    let seq = 0;
    let state = initial.state;
    for await (const got of all(owner)) {
      state = fold(state, checked(got));
      seq = seqOf(got.at(-1));
    }
    if (await states.put(owner, { seq, state }, { ifVersion: version }))
      return remember(owner, { version: version + 1, seq, state: deepFreeze(state) });
    return current(owner);
  }

  async function current(owner: string): Promise<Kept<S>> {
    const version = await store.version(states.ns, owner);
    const hit = cache.get(owner);
    if (version !== undefined && hit?.version === version) return remember(owner, hit);
    const record = version === undefined ? undefined : await store.get(states.ns, owner);
    if (!record) {
      cache.delete(owner);
      return initial;
    }
    const item = states.check(record);
    if (!item) return refold(owner, record.version);
    return remember(owner, { version: item.version, seq: item.value.seq, state: deepFreeze(item.value.state) });
  }

  return {
    async append(owner, list, also) {
      for (let attempt = 1; ; attempt++) {
        const from = await current(owner);
        if (list.length === 0) return from.state;
        const state = fold(from.state, list);
        const seq = from.seq + list.length;
        const more = also ? await also(state, from.state) : [];
        const writes = [
          ...list.map((event, i) => eventWrite(owner, from.seq + i + 1, event)),
          ...more,
          states.writes.put(owner, { seq, state }, { ifVersion: from.version }),
        ];
        if (await store.commit(writes))
          return remember(owner, { version: from.version + 1, seq, state: deepFreeze(state) }).state;
        if (attempt === ATTEMPTS)
          throw new AppError('INTERNAL_ERROR', 'record store: an append kept conflicting', { reason: 'conflict' });
      }
    },
    state: async (owner) => (await current(owner)).state,
    async events(owner, p = {}) {
      const got = await page(owner, p.after ?? 0, p.limit);
      return got.flatMap((r) => {
        const item = events.check(r);
        return item ? [{ seq: seqOf(r), event: item.value }] : [];
      });
    },
    async erase(owner, also) {
      for (;;) {
        const version = (await store.version(states.ns, owner)) ?? 0;
        const ids: string[] = [];
        for await (const got of all(owner)) ids.push(...got.map((r) => r.id));
        const writes = [
          ...ids.map((id) => events.writes.delete(id)),
          ...(also ? await also() : []),
          states.writes.delete(owner, { ifVersion: version }),
        ];
        if (await store.commit(writes)) {
          cache.delete(owner);
          return ids.length;
        }
      }
    },
  };
}
