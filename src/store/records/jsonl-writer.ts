/**
 * The JSONL engine's write queue, with group commit: the commits that arrive while a group's write and fdatasync are
 * in flight form the next group, written with one append and one sync. Contracts:
 * - Commits are decided in arrival order, each against the held state and the changes of the commits before it in
 *   its group; the held state changes only once a group is on the medium, so a reader never sees a write that is not
 *   durable, and a commit resolves (true or false) only once its group's line is synced.
 * - When a group's write or sync fails, every commit of the group rejects, nothing of it is applied, and the file is
 *   cut back to its last synced byte; when even that fails the writer refuses every later commit (`broken`) until the
 *   store is opened again (which replays the file).
 * - Between groups, `after` runs alone (the compaction), so it never races a write.
 */
import { setImmediate as yieldToIo } from 'node:timers/promises';
import type { RecordState } from './memory-state.ts';
import type { Prepared } from './writes.ts';
import { lineOf } from './jsonl-lines.ts';

interface Pending {
  writes: Prepared[];
  resolve(ok: boolean): void;
  reject(err: unknown): void;
}

export interface GroupWriter {
  commit(writes: Prepared[]): Promise<boolean>;
  /** Resolves once the queue is empty. */
  drained(): Promise<void>;
}

export function createGroupWriter(
  state: RecordState,
  io: {
    /** Appends `bytes` and syncs them; on failure cuts the file back (rejecting with `broken` when it cannot). */
    write(bytes: Buffer): Promise<void>;
    /** Runs between groups. */
    after(): Promise<void>;
  },
  /** At most this many commits a group (1: no group commit, as a benchmark's baseline). */
  maxGroup = Infinity,
): GroupWriter {
  const queue: Pending[] = [];
  let running: Promise<void> | undefined;

  async function writeGroup(group: Pending[]): Promise<void> {
    const pending = new Map<string, number>();
    const versionOf = (key: string) => pending.get(key) ?? state.versionOf(key);
    const decided = group.map((p) => {
      const changes = state.decide(p.writes, versionOf);
      for (const c of changes ?? []) pending.set(`${c.ns}:${c.id}`, c.op === 'put' ? c.version : 0);
      return changes;
    });
    const lines = decided.flatMap((changes) => (changes ? [lineOf(changes)] : []));
    if (lines.length > 0) {
      try {
        await io.write(Buffer.from(lines.join('')));
      } catch (err) {
        for (const p of group) p.reject(err);
        return;
      }
    }
    decided.forEach((changes, i) => {
      changes?.forEach(state.apply);
      group[i]?.resolve(changes !== undefined);
    });
  }

  async function run(): Promise<void> {
    // One turn of the event loop first, so that commits made together (Promise.all) start as one group.
    await yieldToIo();
    while (queue.length > 0) {
      await writeGroup(queue.splice(0, maxGroup));
      await io.after();
    }
  }

  const start = (): Promise<void> =>
    (running ??= run().finally(() => {
      running = undefined;
      if (queue.length > 0) void start();
    }));

  return {
    commit(writes) {
      const done = new Promise<boolean>((resolve, reject) => queue.push({ writes, resolve, reject }));
      void start();
      return done;
    },
    drained: async () => {
      while (running) await running;
    },
  };
}
