/**
 * The JSONL store's sessions by update time (`EventStore.recent`), in memory: built from the directory's listing
 * (each session's last valid event) on the first `recent`, then kept by the store's own writes — an acknowledged
 * append or create places its session at its last event, a delete takes it out (the directory is this store's
 * alone: dir-lock.ts). Writes made while the listing is read win over what it read of their sessions.
 */
import { createRecencyIndex } from './recency-index.ts';
import type { RecentPage, RecentQuery, SessionInfo } from './types.ts';

export function createJsonlRecency(listAll: () => Promise<SessionInfo[]>) {
  const index = createRecencyIndex();
  let built: Promise<void> | undefined;
  /** The sessions written while the listing is read. */
  let touched: Set<string> | undefined;

  const build = async () => {
    touched = new Set();
    try {
      const read = await listAll();
      const written = touched;
      index.load(read.filter((info) => !written.has(info.id)));
    } finally {
      touched = undefined;
    }
  };

  return {
    /** After an acknowledged write of the session: its last event now. */
    set(info: SessionInfo): void {
      if (!built) return; // built later, from the files
      touched?.add(info.id);
      index.set(info);
    },
    /** After the session's file is gone. */
    remove(id: string): void {
      if (!built) return;
      touched?.add(id);
      index.remove(id);
    },
    async page(query: RecentQuery): Promise<RecentPage> {
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
      return index.page(query);
    },
    clear(): void {
      built = undefined;
      index.clear();
    },
  };
}
