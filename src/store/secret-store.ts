/**
 * A small durable store of secrets by key (tool servers' OAuth registrations and tokens, the /mcp sealing key, the A2A
 * push signing seed) on the record store of the sessions' medium (namespace `secret`), with the record store's leases:
 * no engine of its own. The record store is opened and closed by its owner (createApp), not here.
 * Contracts (test/unit/secret-store-contract.ts runs them on every record store engine):
 * - `get` answers what the last `set` of the key stored, or `undefined`; `set` (of the whole value) and `delete` are
 *   durable once they resolve. Keys are `[A-Za-z0-9_-]{1,128}`, others rejected. Values never appear in logs or errors.
 * - `claim(key, ttlMs)` takes the lease `key` (apart from the value of that key) for every store on the medium: a
 *   {@link Lease} when no one holds it or theirs outlived their `ttlMs`, else `undefined`; of concurrent claims at
 *   most one wins. `release()` leaves alone a lease someone else took after it expired.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { Logger } from '../log/index.ts';
import { collection } from './records/collection.ts';
import { createMemoryRecordStore } from './records/memory-engine.ts';
import type { Lease, RecordStore } from './records/types.ts';

export type { Lease } from './records/types.ts';

export interface SecretStore {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
  /** A lease on `key` for `ttlMs`, or `undefined` when another holder's is still running. */
  claim(key: string, ttlMs: number): Promise<Lease | undefined>;
}

const KEY = /^[A-Za-z0-9_-]{1,128}$/;
/** `key`, checked (through a promise, so an invalid key rejects like a failed read instead of throwing). */
const checked = (key: string): Promise<string> =>
  KEY.test(key)
    ? Promise.resolve(key)
    : Promise.reject(new Error(`secret store: invalid key ${JSON.stringify(key.slice(0, 140))}`));

/** The secret store on `records` (the sessions' medium). */
export function createSecretStore(records: RecordStore, log: Logger): SecretStore {
  const secrets = collection(records, { ns: 'secret', schema: z.string(), log });
  return {
    get: async (key) => (await secrets.get(await checked(key)))?.value,
    async set(key, value) {
      await secrets.put(await checked(key), value);
    },
    async delete(key) {
      await secrets.delete(await checked(key));
    },
    claim: async (key, ttlMs) => secrets.claim(await checked(key), ttlMs),
  };
}

/** A secret store in this process only (nothing durable): a tool service built without one, tests. */
export const createMemorySecretStore = (log: Logger): SecretStore => createSecretStore(createMemoryRecordStore(), log);

/**
 * The random key stored under `key`, made (32 bytes, base64url) by the first caller: every store over the same
 * medium (instances sharing a Redis, and the next start) answers the same bytes. The maker holds the lease
 * `<key>-init` while it makes the key; the others read it once it is there (within `ttlMs`, else it fails).
 */
export async function sharedSecret(store: SecretStore, key: string, ttlMs = 10_000): Promise<Buffer> {
  const deadline = Date.now() + ttlMs;
  for (;;) {
    const existing = await store.get(key);
    if (existing !== undefined) return Buffer.from(existing, 'base64url');
    const lease = await store.claim(`${key}-init`, ttlMs);
    if (lease) {
      try {
        const again = await store.get(key); // made by a holder that released meanwhile
        if (again !== undefined) return Buffer.from(again, 'base64url');
        const made = randomBytes(32);
        await store.set(key, made.toString('base64url'));
        return made;
      } finally {
        await lease.release();
      }
    }
    if (Date.now() > deadline) throw new Error(`secret store: the shared key ${key} was not made within ${ttlMs} ms`);
    await sleep(50);
  }
}
