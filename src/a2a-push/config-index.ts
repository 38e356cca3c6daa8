/**
 * Which tasks have push configs, so that a stored fact of a task without one costs no read of the secret store
 * (a turn with no push config costs what it did before push existed). Contracts:
 * - The set of the tasks' record keys is read once from the record `a2a-push-tasks` and kept there on every change,
 *   under that record's lease: a task is marked before its first config is written and unmarked after its last is
 *   deleted, so a config is never hidden (a failure in between leaves a mark too many, which costs one read).
 * - On a medium several instances share (redis) another instance's change would not be seen here: `mayHave`
 *   answers true there, and the task's record is read at each fact, as before.
 */
import { z } from 'zod';
import { madeOnce } from '../made-once.ts';
import type { Lease, SecretStore } from '../store/secret-store.ts';

const INDEX_KEY = 'a2a-push-tasks';
const indexSchema = z.array(z.string());

const parsed = (raw: string | undefined): Set<string> =>
  new Set(raw === undefined ? [] : (indexSchema.safeParse(JSON.parse(raw)).data ?? []));

export function createConfigIndex(secrets: SecretStore, shared: boolean, locked: (key: string) => Promise<Lease>) {
  const known = madeOnce(async () => parsed(await secrets.get(INDEX_KEY)));
  return {
    /** False only when the task `key` surely has no config. */
    async mayHave(key: string): Promise<boolean> {
      return shared || (await known()).has(key);
    },
    /** Records that the task `key` has configs (`has`) or none. */
    async mark(key: string, has: boolean): Promise<void> {
      if (shared) return;
      const local = await known();
      if (local.has(key) === has) return;
      const lease = await locked(INDEX_KEY);
      try {
        const stored = parsed(await secrets.get(INDEX_KEY));
        if (has) stored.add(key);
        else stored.delete(key);
        await secrets.set(INDEX_KEY, JSON.stringify([...stored]));
        if (has) local.add(key);
        else local.delete(key);
      } finally {
        await lease.release();
      }
    },
  };
}
