/**
 * A store's identity (EventStore.storeId): one per medium, not per start, so a client can tell whether the seqs it
 * holds still number the same logs. Memory: one per store; JSONL: the file `.agentd-store-id` beside the logs; Redis:
 * the key `<keyPrefix>store-id`.
 */
import { randomUUID } from 'node:crypto';
import { link, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log/index.ts';
import { errno, readTrimmed, writeNewFile } from './jsonl-file.ts';

const STORE_ID_FILE = '.agentd-store-id';

/** What an identity looks like when read back (a UUID, as made here, or any short token an operator wrote). */
const STORE_ID = /^[\w.:-]{1,128}$/;

export const newStoreId = (): string => randomUUID();

/** Sets `KEYS[1]` to `ARGV[1]` unless it holds an identity already (SET NX); returns what it holds. */
export const REDIS_STORE_ID = `
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])`;

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
