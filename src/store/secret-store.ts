/**
 * A small durable store of secrets by key (tool servers' OAuth tokens and client registrations), on the event store's
 * medium: `jsonl` one file per key under `<dir>/.agentd-secrets/` (0600, folder 0700, replaced atomically); `redis`
 * one string per key under `<keyPrefix>secret:`, shared by every instance; `memory` nothing durable.
 * Contracts (test/unit/secret-store-contract.ts runs them on every engine):
 * - `get` answers what the last `set` of the key stored, or `undefined`; `set` (of the whole value) and `delete` are
 *   durable once they resolve. Keys are `[A-Za-z0-9_-]{1,128}`, others rejected. Values never appear in logs or errors.
 * - `claim(key, ttlMs)` takes the lease `key` (apart from the value of that key) for every store on the medium: a
 *   {@link Lease} when no one holds it or theirs outlived their `ttlMs`, else `undefined`; of concurrent claims at
 *   most one wins. `release()` leaves alone a lease someone else took after it expired.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { chmod, link, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { Logger } from '../log/index.ts';
import { closeRedisConnection, createRedisConnection } from '../redis/index.ts';
import type { StorageConfig } from './index.ts';

export interface SecretStore {
  open(): Promise<void>;
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
  /** A lease on `key` for `ttlMs`, or `undefined` when another holder's is still running. */
  claim(key: string, ttlMs: number): Promise<Lease | undefined>;
  close(): Promise<void>;
}

export interface Lease {
  release(): Promise<void>;
}

/** What a lease record holds: who took it and until when (epoch ms). */
const leaseRecord = z.object({ owner: z.string(), until: z.number() });
type LeaseRecord = z.infer<typeof leaseRecord>;

const KEY = /^[A-Za-z0-9_-]{1,128}$/;
const checkKey = (key: string): string => {
  if (!KEY.test(key)) throw new Error(`secret store: invalid key ${JSON.stringify(key.slice(0, 140))}`);
  return key;
};

export function createMemorySecretStore(): SecretStore {
  const values = new Map<string, string>();
  const leases = new Map<string, LeaseRecord>();
  return {
    open: () => Promise.resolve(),
    // Through `then`, so an invalid key rejects like the durable engines' do instead of throwing.
    get: (key) => Promise.resolve().then(() => values.get(checkKey(key))),
    set: (key, value) => Promise.resolve().then(() => void values.set(checkKey(key), value)),
    delete: (key) => Promise.resolve().then(() => void values.delete(checkKey(key))),
    claim: (key, ttlMs) =>
      Promise.resolve().then(() => {
        const held = leases.get(checkKey(key));
        if (held && held.until > Date.now()) return undefined;
        const mine = { owner: randomUUID(), until: Date.now() + ttlMs };
        leases.set(key, mine);
        return { release: () => Promise.resolve().then(() => void (leases.get(key) === mine && leases.delete(key))) };
      }),
    close: () => Promise.resolve(),
  };
}

/**
 * One file per key, readable by this user only; a write goes to a temporary file renamed over the old one. A lease is
 * an exclusively created `<key>.lease` file; an expired one is renamed away before it is taken over.
 */
export function createDirSecretStore(dir: string): SecretStore {
  const file = (key: string) => join(dir, `${checkKey(key)}.json`);
  let counter = 0;
  return {
    async open() {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await chmod(dir, 0o700);
    },
    async get(key) {
      const path = file(key);
      try {
        return await readFile(path, 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw new Error(`secret store: cannot read ${key}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
      }
    },
    async set(key, value) {
      const target = file(key);
      const temp = `${target}.${process.pid}.${++counter}.tmp`;
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await writeFile(temp, value, { mode: 0o600, flush: true });
      await rename(temp, target);
    },
    async delete(key) {
      await rm(file(key), { force: true });
    },
    async claim(key, ttlMs) {
      const path = join(dir, `${checkKey(key)}.lease`);
      const mine: LeaseRecord = { owner: randomUUID(), until: Date.now() + ttlMs };
      const lease: Lease = {
        async release() {
          if ((await readLease(path))?.owner === mine.owner) await rm(path, { force: true });
        },
      };
      if (await createExclusive(path, mine)) return lease;
      const held = await readLease(path);
      if (held && held.until > Date.now()) return undefined;
      // Expired (or unreadable): move it aside; of several claimants only one rename finds it.
      const aside = `${path}.${randomUUID()}.stale`;
      try {
        await rename(path, aside);
      } catch {
        return undefined;
      }
      const moved = await readLease(aside);
      if (held && moved?.owner !== held.owner) {
        // A live lease was taken meanwhile and moved by mistake: put it back unless the place is taken again.
        await link(aside, path).catch(() => undefined);
        await rm(aside, { force: true });
        return undefined;
      }
      await rm(aside, { force: true });
      return (await createExclusive(path, mine)) ? lease : undefined;
    },
    close: () => Promise.resolve(),
  };
}

/**
 * Creates `path` holding `record` unless it exists (then `false`). The record is written aside and linked into
 * place, so another claimant never reads a lease half-written (an empty one would look expired).
 */
async function createExclusive(path: string, record: LeaseRecord): Promise<boolean> {
  const temp = `${path}.${randomUUID()}.tmp`;
  try {
    await writeFile(temp, JSON.stringify(record), { mode: 0o600 });
    await link(temp, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new Error(`secret store: cannot create a lease: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  } finally {
    await rm(temp, { force: true });
  }
}

async function readLease(path: string): Promise<LeaseRecord | undefined> {
  try {
    return leaseRecord.safeParse(JSON.parse(await readFile(path, 'utf8'))).data;
  } catch {
    return undefined;
  }
}

/** Deletes KEYS[1] when it holds ARGV[1] (a lease's owner): a release never ends a lease someone else took since. */
export const RELEASE_IF_OWNER = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/** One Redis string per key, on its own connection; a lease is `SET NX PX` on `<keyPrefix>secret-lease:<key>`. */
export function createRedisSecretStore(options: { url: string; keyPrefix: string; log: Logger }): SecretStore {
  const client = createRedisConnection(options.url, 'secret store', options.log);
  const redisKey = (key: string) => `${options.keyPrefix}secret:${checkKey(key)}`;
  return {
    async open() {
      if (!client.isOpen) await client.connect();
    },
    async get(key) {
      return (await client.get(redisKey(key))) ?? undefined;
    },
    async set(key, value) {
      await client.set(redisKey(key), value);
    },
    async delete(key) {
      await client.del(redisKey(key));
    },
    async claim(key, ttlMs) {
      const leaseKey = `${options.keyPrefix}secret-lease:${checkKey(key)}`;
      const owner = randomUUID();
      if ((await client.set(leaseKey, owner, { condition: 'NX', expiration: { type: 'PX', value: ttlMs } })) !== 'OK')
        return undefined;
      return {
        async release() {
          await client.eval(RELEASE_IF_OWNER, { keys: [leaseKey], arguments: [owner] });
        },
      };
    },
    async close() {
      await closeRedisConnection(client);
    },
  };
}

/**
 * The random key stored under `key`, made (32 bytes, base64url) by the first caller: every store over the same
 * medium (instances sharing a Redis or a folder, and the next start) answers the same bytes. The maker holds the
 * lease `<key>-init` while it makes the key; the others read it once it is there (within `ttlMs`, else it fails).
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

/** The secret store on the medium `storage` names. */
export function createSecretStore(storage: StorageConfig, log: Logger): SecretStore {
  switch (storage.type) {
    case 'jsonl':
      return createDirSecretStore(join(storage.dir, '.agentd-secrets'));
    case 'memory':
      return createMemorySecretStore();
    case 'redis':
      return createRedisSecretStore({ url: storage.url, keyPrefix: storage.keyPrefix, log });
    case 'postgres': // until secrets move onto the record store: kept in memory (issue 83)
      log.warn(
        'secret store: nothing is kept across restarts on storage.type postgres yet (OAuth tokens sign in again)',
      );
      return createMemorySecretStore();
  }
}
