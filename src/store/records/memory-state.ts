/**
 * The records of one process's store (the memory engine's, and the JSONL engine's replay of its file): records by key,
 * each index group a SortedIndex, and the expiry times in one more, so that an expired record is dropped the first
 * time any read or commit looks at the store after its time (`purge`), in O(1) when none expired.
 */
import type { Clock } from '../../clock.ts';
import { SortedIndex } from './sorted-index.ts';
import type { IndexEntry, RecordQuery, StoredRecord } from './types.ts';
import type { Prepared } from './writes.ts';

/** A record as held: its value's JSON text (parsed for each reader), version, index entries and expiry. */
export interface Held {
  ns: string;
  id: string;
  json: string;
  version: number;
  index: readonly IndexEntry[];
  expiresAt?: number | undefined;
}

/** One applied write: the record as it is after it (`put`, with its new version) or its removal. */
export type Change = ({ op: 'put' } & Held) | { op: 'delete'; ns: string; id: string };

const groupKey = (ns: string, index: string, group: string): string => `${ns}\n${index}\n${group}`;
/** About the bytes a record takes on a medium (the JSONL engine measures its lines exactly). */
const roughSize = (h: Held): number => h.json.length + h.id.length + h.ns.length + 48 * (1 + h.index.length);

export const toStored = (h: Held): StoredRecord => ({
  ns: h.ns,
  id: h.id,
  value: JSON.parse(h.json) as unknown,
  version: h.version,
});

export type RecordState = ReturnType<typeof createRecordState>;

export function createRecordState(clock: Clock, sizeOf: (held: Held) => number = roughSize) {
  const records = new Map<string, Held>();
  const groups = new Map<string, SortedIndex>();
  let expiries = new SortedIndex();
  let liveBytes = 0;

  const unhold = (key: string): void => {
    const held = records.get(key);
    if (!held) return;
    records.delete(key);
    liveBytes -= sizeOf(held);
    for (const e of held.index) {
      const g = groups.get(groupKey(held.ns, e.index, e.group));
      g?.remove({ score: e.score, id: held.id });
      if (g?.size === 0) groups.delete(groupKey(held.ns, e.index, e.group));
    }
    if (held.expiresAt !== undefined) expiries.remove({ score: held.expiresAt, id: key });
  };
  const hold = (key: string, held: Held): void => {
    unhold(key);
    records.set(key, held);
    liveBytes += sizeOf(held);
    for (const e of held.index) {
      const k = groupKey(held.ns, e.index, e.group);
      let g = groups.get(k);
      if (!g) groups.set(k, (g = new SortedIndex()));
      g.insert({ score: e.score, id: held.id });
    }
    if (held.expiresAt !== undefined) expiries.insert({ score: held.expiresAt, id: key });
  };
  /** Drops the records whose time came. */
  const purge = (): void => {
    const now = clock.now();
    for (let first = expiries.first(); first && first.score <= now; first = expiries.first()) unhold(first.id);
  };

  return {
    purge,
    get(key: string): Held | undefined {
      purge();
      return records.get(key);
    },
    /** A record's version (0: absent or expired), without purging: what a commit's conditions see. */
    versionOf: (key: string): number => {
      const held = records.get(key);
      return held && !(held.expiresAt !== undefined && held.expiresAt <= clock.now()) ? held.version : 0;
    },
    /**
     * The changes `writes` make when every condition holds against `versionOf` (the held versions, or those a queue of
     * commits will leave); undefined (nothing to apply) otherwise.
     */
    decide(writes: readonly Prepared[], versionOf: (key: string) => number): Change[] | undefined {
      const changes: Change[] = [];
      for (const w of writes) {
        const current = versionOf(w.key);
        if (w.ifVersion !== undefined && w.ifVersion !== current) return undefined;
        if (w.op === 'delete') changes.push({ op: 'delete', ns: w.ns, id: w.id });
        else {
          const { ns, id, json, index, expiresAt } = w;
          changes.push({ op: 'put', ns, id, json, index, expiresAt, version: current + 1 });
        }
      }
      return changes;
    },
    apply: (change: Change): void => {
      const key = `${change.ns}:${change.id}`;
      if (change.op === 'delete') unhold(key);
      else hold(key, { ...change });
    },
    query(q: RecordQuery): Held[] {
      purge();
      const g = groups.get(groupKey(q.ns, q.index, q.group));
      if (!g) return [];
      return g.range(q).map((e) => records.get(`${q.ns}:${e.id}`) as Held);
    },
    count(ns: string, index: string, group: string): number {
      purge();
      return groups.get(groupKey(ns, index, group))?.size ?? 0;
    },
    /** Every live record (for a compaction). */
    live(): Held[] {
      purge();
      return [...records.values()];
    },
    /** The bytes the live records take (by `sizeOf`): in a compacted JSONL file. Expired ones are dropped first. */
    liveBytes(): number {
      purge();
      return liveBytes;
    },
    /** Forgets every record. */
    clear(): void {
      records.clear();
      groups.clear();
      liveBytes = 0;
      expiries = new SortedIndex();
    },
  };
}
