/**
 * A store's identity (EventStore.storeId): one per medium, not per start, so a client can tell whether the seqs it
 * holds still number the same logs. Memory: one per store; JSONL: the file `.agentd-store-id` beside the logs; Redis:
 * the key `<keyPrefix>store-id`.
 */
import { randomUUID } from 'node:crypto';
import { link, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log/index.ts';
import { madeOnce } from '../made-once.ts';
import type { StoreIdentity } from './types.ts';
import { errno, readTrimmed, writeNewFile } from './jsonl-file.ts';

const STORE_ID_FILE = '.agentd-store-id';

/** What an identity looks like when read back (a UUID, as made here, or any short token an operator wrote). */
const STORE_ID = /^[\w.:-]{1,128}$/;

export const newStoreId = (): string => randomUUID();

/**
 * An identity held in memory (the memory store's): it never goes back, so `check` finds it; `renew` makes a new one.
 * Both refuse as `guard` does (a closed store).
 */
export function heldIdentity(guard: () => void) {
  let id = newStoreId();
  return {
    storeId: (): Promise<string> => Promise.resolve().then(() => (guard(), id)),
    identity: (op: 'check' | 'renew'): Promise<StoreIdentity> =>
      Promise.resolve().then(() => {
        guard();
        return op === 'check' ? { storeId: id } : { previous: id, storeId: (id = newStoreId()) };
      }),
  };
}

/**
 * A folder's identity (the JSONL store's): read (made where absent) at the first `storeId()`. One process holds the
 * folder (dir-lock.ts) and every write is synced, so `check` finds the identity held; `renew` writes a new one. Errors
 * reach the caller through `failed` (the store's own error).
 */
export function folderIdentity(
  dir: string,
  options: { temporaryPrefix: string; sync: boolean; log: Logger; ready: () => Promise<void> },
  failed: (err: unknown) => Error,
) {
  const { temporaryPrefix, sync, log } = options;
  let renewed: string | undefined;
  const read = madeOnce(async () => {
    await options.ready();
    return fileStoreId(dir, temporaryPrefix, sync, log);
  });
  const storeId = (): Promise<string> =>
    renewed !== undefined ? Promise.resolve(renewed) : read().catch((e: unknown) => Promise.reject(failed(e)));
  return {
    storeId,
    async identity(op: 'check' | 'renew'): Promise<StoreIdentity> {
      const previous = await storeId();
      if (op === 'check') return { storeId: previous };
      const made = await renewFileStoreId(dir, temporaryPrefix, sync).catch((e: unknown) => Promise.reject(failed(e)));
      renewed = made;
      return { storeId: made, previous };
    },
  };
}

/**
 * The Redis store's identity: read (made where absent) at the first `storeId()`, renewed by `identity` (REDIS_IDENTITY).
 * `held()` names it in every append, so a store-id key holding another refuses the append.
 */
export function redisIdentity(run: (script: string, args: string[]) => Promise<unknown>) {
  let held: string | undefined;
  const first = madeOnce(async () => (held ??= (await run(REDIS_STORE_ID, [newStoreId()])) as string));
  return {
    held: () => held,
    storeId: (): Promise<string> => (held === undefined ? first() : Promise.resolve(held)),
    async identity(op: 'check' | 'renew'): Promise<StoreIdentity> {
      const before = held ?? (await first());
      held = (await run(REDIS_IDENTITY, [before, newStoreId(), op])) as string;
      return held === before ? { storeId: held } : { storeId: held, previous: before };
    },
  };
}

/** Sets `KEYS[1]` to `ARGV[1]` unless it holds an identity already (SET NX); returns what it holds. */
export const REDIS_STORE_ID = `
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])`;

/**
 * The identity check (EventStore.identity) on Redis. KEYS: the store-id key. ARGV: the identity held, a new one, the
 * op (`check` | `renew`). Another identity found is answered (adopted); none, or the held one when renewing, is
 * replaced by the new one. Answers the identity the key holds afterwards.
 */
export const REDIS_IDENTITY = `
local found = redis.call('GET', KEYS[1])
if found and found ~= ARGV[1] then return found end
if found and ARGV[3] ~= 'renew' then return found end
redis.call('SET', KEYS[1], ARGV[2])
return ARGV[2]`;

/**
 * The identity in `dir`'s `.agentd-store-id`, made when there is none: written whole to a temporary file (synced when
 * `sync`), then linked to its name, which refuses an existing file, so concurrent first starts agree on one and a
 * crash leaves none or a whole one. A file holding no identity is replaced with a warning (clients then replay).
 */
export async function fileStoreId(dir: string, temporaryPrefix: string, sync: boolean, log: Logger): Promise<string> {
  const path = join(dir, STORE_ID_FILE);
  for (let attempt = 0; ; attempt++) {
    const found = await readTrimmed(path);
    if (found !== undefined && STORE_ID.test(found)) return found;
    const id = newStoreId();
    const temporary = join(dir, `${temporaryPrefix}${id}`);
    await writeNewFile(temporary, Buffer.from(`${id}\n`, 'utf8'), sync);
    try {
      if (found === undefined) await link(temporary, path);
      else {
        log.warn({ file: path }, 'event store: the store id file holds no id; a new one replaces it');
        await rename(temporary, path);
      }
      return id;
    } catch (e) {
      if (errno(e) !== 'EEXIST' || attempt > 0) throw e; // another start made it meanwhile: read theirs
    } finally {
      await unlink(temporary).catch(() => undefined);
    }
  }
}

/** Replaces `dir`'s identity with a new one (written whole, then renamed over the old): what `identity('renew')` does. */
export async function renewFileStoreId(dir: string, temporaryPrefix: string, sync: boolean): Promise<string> {
  const id = newStoreId();
  const temporary = join(dir, `${temporaryPrefix}${id}`);
  await writeNewFile(temporary, Buffer.from(`${id}\n`, 'utf8'), sync);
  await rename(temporary, join(dir, STORE_ID_FILE));
  return id;
}
