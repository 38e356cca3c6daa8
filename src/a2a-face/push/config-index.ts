/**
 * Which tasks have push configs, so that a stored fact of a task without one costs no read of the secret store
 * (a turn with no push config costs what it did before push existed). Contracts:
 * - The set of the tasks' record keys is read from the record `a2a-push-tasks` and kept there on every change,
 *   under that record's lease: a task is marked before its first config is written and unmarked after its last is
 *   deleted, so a config is never hidden (a failure in between leaves a mark too many, which costs one read).
 * - On a medium several instances share (redis), `changes` tells every instance of each change: the set is read
 *   again after one, and whenever hearing changes (re)starts; while changes are not heard (Redis away, not yet
 *   subscribed) `mayHave` answers true, and the task's record is read at each fact. A config set on another instance
 *   is seen here once its message arrived (Redis pub/sub: well under a millisecond on one network).
 */
import { z } from 'zod';
import type { Lease, SecretStore } from '../../store/secret-store.ts';

const INDEX_KEY = 'a2a-push-tasks';
const indexSchema = z.array(z.string());

/** How instances sharing the medium tell each other that the index changed (changes-redis.ts). */
export interface IndexChanges {
  /** Whether changes are heard now; while not, every task may have configs. */
  live(): boolean;
  /** Tells every instance, this one included, that the index changed. */
  publish(): Promise<void>;
  /** Calls `onChange` on every change published, and whenever hearing changes (re)starts. */
  listen(onChange: () => void): void;
}

const parsed = (raw: string | undefined): Set<string> =>
  new Set(raw === undefined ? [] : (indexSchema.safeParse(JSON.parse(raw)).data ?? []));

export function createConfigIndex(
  secrets: SecretStore,
  changes: IndexChanges | undefined,
  locked: (key: string) => Promise<Lease>,
) {
  let cached: Promise<Set<string>> | undefined;
  const known = () => {
    const read = (cached ??= secrets.get(INDEX_KEY).then(parsed));
    void read.catch(() => cached === read && (cached = undefined)); // a failed read is tried again
    return read;
  };
  changes?.listen(() => (cached = undefined));
  return {
    /** False only when the task `key` surely has no config. */
    async mayHave(key: string): Promise<boolean> {
      if (changes && !changes.live()) return true;
      return (await known()).has(key);
    },
    /** Records that the task `key` has configs (`has`) or none. */
    async mark(key: string, has: boolean): Promise<void> {
      if (!changes && (await known()).has(key) === has) return;
      const lease = await locked(INDEX_KEY);
      let changed = false;
      try {
        const stored = parsed(await secrets.get(INDEX_KEY));
        if (stored.has(key) !== has) {
          if (has) stored.add(key);
          else stored.delete(key);
          await secrets.set(INDEX_KEY, JSON.stringify([...stored]));
          changed = true;
        }
        cached = Promise.resolve(stored);
      } finally {
        await lease.release();
      }
      if (changed) await changes?.publish();
    },
  };
}
