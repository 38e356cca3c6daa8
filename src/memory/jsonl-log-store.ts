/**
 * The memory engines beside the session logs: one append-only file per owner under `<dir>/.agentd-memory/`, named by
 * a hash of the owner (no owner's name reaches a path), and the audit log `<dir>/.agentd-memory-audit.jsonl`.
 * - A file is made only when something is written; each append is written and fsync'd (and, for a new file, its
 *   folder) before it resolves. Appends and erases of one owner run in call order.
 * - A line counts once its newline is written: a torn last line is skipped, and the next append starts on a new line.
 * - `erase` unlinks the owner's file (the folder is synced): the memory is gone from disk, not hidden.
 * - A failure of the disk rejects with SERVICE_UNAVAILABLE (`reason: "storage"`, the errno as `cause`).
 */
import { open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { z } from 'zod';
import { AppError, isAppError } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import { dirMaker, errno, isMissing, NL, syncPath } from '../store/jsonl-file.ts';
import {
  MemoryAuditRecordSchema,
  MemoryEventSchema,
  ownerDigest,
  parseEntry,
  type MemoryAuditLog,
  type MemoryEvent,
  type MemoryLogStore,
} from './types.ts';

export const MEMORY_DIR = '.agentd-memory';
export const MEMORY_AUDIT_FILE = '.agentd-memory-audit.jsonl';

/** The file name of `owner`'s log: the hex SHA-256 of its name. */
export const memoryFileName = (owner: string): string => `${ownerDigest(owner)}.jsonl`;

/** Appends `lines` to `path` (made when missing, its folder synced then), after a newline when a torn tail ends it. */
async function appendLines(path: string, lines: readonly string[], folder: string): Promise<void> {
  const fh = await open(path, 'a+');
  let made = false;
  try {
    const { size } = await fh.stat();
    made = size === 0;
    const last = Buffer.alloc(1);
    if (size > 0) await fh.read(last, 0, 1, size - 1);
    const torn = size > 0 && last[0] !== NL;
    await fh.appendFile(`${torn ? '\n' : ''}${lines.join('\n')}\n`);
    await fh.datasync();
  } finally {
    await fh.close();
  }
  if (made) await syncPath(folder, 'sync');
}

/** The complete lines of `path` that `schema` accepts ([] when it is missing); the others are skipped with a warning. */
async function readLines<S extends z.ZodType>(path: string, schema: S, log: Logger): Promise<z.output<S>[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if (isMissing(e)) return [];
    throw e;
  }
  const lines = text.split('\n');
  const torn = lines.pop() !== '';
  const parsed: z.output<S>[] = [];
  let skipped = 0;
  for (const line of lines) {
    if (line === '') continue;
    const entry = parseEntry(schema, line);
    if (entry === undefined) skipped++;
    else parsed.push(entry);
  }
  // The file and counts only: a memory line's text never reaches a log.
  if (skipped > 0 || torn) log.warn({ file: path, skipped, torn }, 'memory store: skipped lines that do not parse');
  return parsed;
}

const unavailable = (err: unknown): never => {
  if (isAppError(err)) throw err;
  const cause = errno(err) ?? 'error';
  throw new AppError('SERVICE_UNAVAILABLE', `The memory store (disk) failed: ${cause}`, { reason: 'storage', cause });
};

/** Runs each owner's operations one after another, in call order; a disk failure rejects as `unavailable` says. */
function perOwnerQueue() {
  const tails = new Map<string, Promise<unknown>>();
  return <T>(owner: string, run: () => Promise<T>): Promise<T> => {
    const next = (tails.get(owner) ?? Promise.resolve()).then(run, run).catch(unavailable);
    const tail = next.catch(() => undefined);
    tails.set(owner, tail);
    void tail.then(() => {
      if (tails.get(owner) === tail) tails.delete(owner);
    });
    return next;
  };
}

export function createJsonlMemoryLogStore(dir: string, log: Logger): MemoryLogStore {
  const folder = join(dir, MEMORY_DIR);
  const makeFolder = dirMaker(folder);
  const queued = perOwnerQueue();
  const path = (owner: string) => join(folder, memoryFileName(owner));
  return {
    append: (owner, events) =>
      queued(owner, async () => {
        if (events.length === 0) return;
        await makeFolder();
        await appendLines(
          path(owner),
          events.map((e) => JSON.stringify(e)),
          folder,
        );
      }),
    read: (owner) => queued(owner, (): Promise<MemoryEvent[]> => readLines(path(owner), MemoryEventSchema, log)),
    erase: (owner) =>
      queued(owner, async () => {
        try {
          await unlink(path(owner));
        } catch (e) {
          if (isMissing(e)) return;
          throw e;
        }
        await syncPath(folder, 'sync');
      }),
    close: () => Promise.resolve(),
  };
}

export function createJsonlMemoryAuditLog(dir: string, log: Logger): MemoryAuditLog {
  const file = join(dir, MEMORY_AUDIT_FILE);
  const makeDir = dirMaker(dir);
  const queued = perOwnerQueue();
  return {
    record: (record) =>
      queued('', async () => {
        await makeDir();
        await appendLines(file, [JSON.stringify(record)], dir);
      }),
    read: () => readLines(file, MemoryAuditRecordSchema, log).catch(unavailable),
  };
}
