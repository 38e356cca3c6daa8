/**
 * A small durable store of secrets by key (OAuth tokens and client registrations of tool servers), beside the
 * event store and on the same medium: `jsonl` storage keeps one file per key under `<dir>/.agentd-secrets/`
 * (mode 0600, folder 0700, replaced atomically); `redis` one string key per secret under `<keyPrefix>secret:`,
 * so every instance sharing that Redis sees the same secrets; `memory` keeps nothing across restarts.
 *
 * Contracts (test/unit/secret-store-contract.ts, run against every engine):
 * - `get` answers what the last `set` of the key stored, or `undefined` (never set, or deleted).
 * - `set` and `delete` are durable once they resolve; a `set` replaces the whole value.
 * - Keys are `[A-Za-z0-9_-]{1,128}` (they name files); any other key is refused with an Error.
 * - Values are never logged: errors name the key and the engine only.
 */
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log/index.ts';
import { createRedisConnection } from '../redis/index.ts';
import type { StorageConfig } from './index.ts';

export interface SecretStore {
  open(): Promise<void>;
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
  close(): Promise<void>;
}

const KEY = /^[A-Za-z0-9_-]{1,128}$/;
const checkKey = (key: string): string => {
  if (!KEY.test(key)) throw new Error(`secret store: invalid key ${JSON.stringify(key.slice(0, 140))}`);
  return key;
};

export function createMemorySecretStore(): SecretStore {
  const values = new Map<string, string>();
  return {
    open: () => Promise.resolve(),
    // Through `then`, so an invalid key rejects like the durable engines' do instead of throwing.
    get: (key) => Promise.resolve().then(() => values.get(checkKey(key))),
    set: (key, value) => Promise.resolve().then(() => void values.set(checkKey(key), value)),
    delete: (key) => Promise.resolve().then(() => void values.delete(checkKey(key))),
    close: () => Promise.resolve(),
  };
}

/** One file per key, readable by this user only; a write goes to a temporary file renamed over the old one. */
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
    close: () => Promise.resolve(),
  };
}

/** One Redis string per key under `<keyPrefix>secret:`, on its own connection. */
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
    async close() {
      if (client.isOpen) await client.close().catch(() => undefined);
    },
  };
}

/** The secret store on the medium `storage` names (see the file's comment). */
export function createSecretStore(storage: StorageConfig, log: Logger): SecretStore {
  switch (storage.type) {
    case 'jsonl':
      return createDirSecretStore(join(storage.dir, '.agentd-secrets'));
    case 'memory':
      return createMemorySecretStore();
    case 'redis':
      return createRedisSecretStore({ url: storage.url, keyPrefix: storage.keyPrefix, log });
  }
}
