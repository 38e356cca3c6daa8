/**
 * Sessions by update time in memory (the memory and JSONL engines' `recent`): one sorted array of every session and
 * one per owner, oldest first (so the session just appended to moves to the end), with a map from key to entry.
 * - Order (`RecentQuery`): `updatedAt` newest first, then key in code point order; an array holds the reverse.
 * - `set` moves a session to its time (an append, a create), `remove` takes it out (a delete); both cost a binary
 *   search and one splice. A page costs a binary search and what it answers; `total` is an array's length.
 * - Each entry keeps its session's number of turns, and the index their sums per owner and overall, changed by the
 *   same `set`/`remove` (`EventStore.turnTotal`): reading one costs a map lookup.
 * - An engine may keep more with each session (`X`, the JSONL store its file): given with every `set` and `load`.
 */
import { compareKeys, splitSessionKey } from '../session-id.ts';
import { partitionPoint } from './stored-event.ts';
import type { RecentPage, RecentQuery, SessionInfo } from './types.ts';

type Position = Pick<SessionInfo, 'id' | 'updatedAt'>;
/** A session as the index keeps it: with its number of turns. */
export type CountedSession = SessionInfo & { turns: number };

/** The arrays' order: oldest first, then key in reverse code point order (the listing's order reversed). */
const ascending = (a: Position, b: Position): number =>
  a.updatedAt < b.updatedAt ? -1 : a.updatedAt > b.updatedAt ? 1 : compareKeys(b.id, a.id);

const ownerOf = (key: string): string => splitSessionKey(key).owner ?? '';

export interface RecencyIndex<X extends object = object> {
  /**
   * Places the session at its last event (`info`), replacing where it was, with `turns` turns (`undefined`: as many
   * as it had, 0 for a session it did not hold).
   */
  set(info: SessionInfo & X, turns?: number): void;
  remove(id: string): void;
  /**
   * Adds the sessions it does not hold yet, sorting once (a build from a listing; oldest first sorts fastest); keeps
   * those it holds. The objects given become its entries: they must not change afterwards.
   */
  load(infos: readonly (CountedSession & X)[]): void;
  page(query: RecentQuery): RecentPage;
  /** Every session it holds, oldest first. */
  sessions(): readonly (CountedSession & X)[];
  /** How many turns the sessions of `owner` (every session when undefined) hold. */
  turnTotal(owner?: string): number;
  clear(): void;
}

export function createRecencyIndex<X extends object = object>(): RecencyIndex<X> {
  type Entry = CountedSession & X;
  const entries = new Map<string, Entry>();
  const all: Entry[] = [];
  const byOwner = new Map<string, Entry[]>();
  const turnsOf = new Map<string, number>(); // per owner
  let turnsAll = 0;
  const count = (id: string, turns: number) => {
    if (turns === 0) return;
    turnsAll += turns;
    const owner = ownerOf(id);
    const left = (turnsOf.get(owner) ?? 0) + turns;
    if (left === 0) turnsOf.delete(owner);
    else turnsOf.set(owner, left);
  };

  const insert = (list: Entry[], info: Entry) => {
    const at = list.length === 0 || ascending(list.at(-1)!, info) < 0 ? list.length : place(list, info);
    list.splice(at, 0, info);
  };
  const place = (list: Entry[], at: Position) => partitionPoint(list, (e) => ascending(e, at) < 0);
  const take = (list: Entry[], info: Entry) => {
    const at = place(list, info);
    if (list[at] === info) list.splice(at, 1);
  };

  return {
    set(info, turns) {
      const old = entries.get(info.id);
      const owner = ownerOf(info.id);
      let mine = byOwner.get(owner);
      if (!mine) byOwner.set(owner, (mine = []));
      if (old) {
        take(all, old);
        take(mine, old);
      }
      const entry: Entry = { ...info, turns: turns ?? old?.turns ?? 0 };
      count(info.id, entry.turns - (old?.turns ?? 0));
      entries.set(info.id, entry);
      insert(all, entry);
      insert(mine, entry);
    },

    remove(id) {
      const old = entries.get(id);
      if (!old) return;
      entries.delete(id);
      count(id, -old.turns);
      take(all, old);
      const owner = ownerOf(id);
      const mine = byOwner.get(owner);
      if (!mine) return;
      take(mine, old);
      if (mine.length === 0) byOwner.delete(owner);
    },

    load(infos) {
      for (const info of infos)
        if (!entries.has(info.id)) {
          entries.set(info.id, info);
          count(info.id, info.turns);
        }
      all.length = 0;
      byOwner.clear();
      for (const entry of [...entries.values()].sort(ascending)) {
        all.push(entry);
        const owner = ownerOf(entry.id);
        const mine = byOwner.get(owner);
        if (mine) mine.push(entry);
        else byOwner.set(owner, [entry]);
      }
    },

    page({ owner, after, limit }) {
      const list = owner === undefined ? all : (byOwner.get(owner) ?? []);
      // Entries before `end` come after the cursor in the listing's order (the arrays hold it reversed).
      const end = after === undefined ? list.length : place(list, after);
      const sessions: SessionInfo[] = [];
      for (let i = end - 1; i >= 0 && sessions.length < limit; i--) {
        const { id, lastSeq, updatedAt } = list[i]!;
        sessions.push({ id, lastSeq, updatedAt });
      }
      return { sessions, total: list.length };
    },

    sessions: () => all,

    turnTotal: (owner) => (owner === undefined ? turnsAll : (turnsOf.get(owner) ?? 0)),

    clear() {
      turnsOf.clear();
      turnsAll = 0;
      entries.clear();
      all.length = 0;
      byOwner.clear();
    },
  };
}
