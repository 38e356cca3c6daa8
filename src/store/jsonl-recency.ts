/**
 * The JSONL store's sessions by update time (`EventStore.recent`), in memory: built from the directory's listing
 * (each session's last valid event) on the first `recent`, then kept by the store's own writes — an acknowledged
 * append or create places its session at its last event, a delete takes it out (the directory is this store's
 * alone: dir-lock.ts). Writes made while the listing is read win over what it read of their sessions.
 * - Each session's number of turns is kept with it (`turnTotal`): read from its turn index by the build, then given by
 *   every write (the store loads a session's turn index before it appends while this index is `active`).
 */
import { createRecencyIndex, type CountedSession } from './recency-index.ts';
import type { RecentPage, RecentQuery, SessionInfo, StoredEvent } from './types.ts';

/** Sessions whose turns the build counts at once. */
const COUNT_BATCH = 1024;

/** `listAll`: every session of the directory; `turnsOf`: how many turns one holds (its turn index). */
export function createJsonlRecency(listAll: () => Promise<SessionInfo[]>, turnsOf: (id: string) => Promise<number>) {
  const index = createRecencyIndex();
  let built: Promise<void> | undefined;
  /** The sessions written while the listing is read. */
  let touched: Set<string> | undefined;

  const build = async () => {
    touched = new Set();
    try {
      const read: CountedSession[] = [];
      const listed = await listAll();
      for (let i = 0; i < listed.length; i += COUNT_BATCH) {
        const batch = listed.slice(i, i + COUNT_BATCH);
        const counts = await Promise.all(batch.map((info) => turnsOf(info.id)));
        batch.forEach((info, k) => read.push({ ...info, turns: counts[k] ?? 0 }));
      }
      const written = touched;
      index.load(read.filter((info) => !written.has(info.id)));
    } finally {
      touched = undefined;
    }
  };

  /** Builds it on the first call. */
  const ready = async (): Promise<void> => {
    if (!built) {
      const building = build();
      built = building;
      building.catch(() => {
        if (built !== building) return;
        built = undefined; // the next call reads the listing again
        index.clear();
      });
    }
    await built;
  };

  return {
    /** Whether it is built or being built: writes then tell it their sessions' turns. */
    active: (): boolean => built !== undefined,
    /**
     * After an acknowledged write of `stored` to the session: places it at its last event, with its number of turns
     * (`undefined`: unchanged). Returns `stored`.
     */
    placed<T extends StoredEvent>(id: string, stored: T[], turns: number | undefined): T[] {
      const last = stored.at(-1);
      if (!built || !last) return stored; // built later, from the files
      touched?.add(id);
      index.set({ id, lastSeq: last.seq, updatedAt: last.ts }, turns);
      return stored;
    },
    /** After the session's file is gone. */
    remove(id: string): void {
      if (!built) return;
      touched?.add(id);
      index.remove(id);
    },
    async page(query: RecentQuery): Promise<RecentPage> {
      await ready();
      return index.page(query);
    },
    async turnTotal(owner: string | undefined): Promise<number> {
      await ready();
      return index.turnTotal(owner);
    },
    clear(): void {
      built = undefined;
      index.clear();
    },
  };
}
