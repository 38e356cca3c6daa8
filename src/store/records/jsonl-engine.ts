/**
 * The record store on the JSONL medium: one append-only file, `<dir>/.agentd-records.jsonl` (0600), beside the
 * session logs, replayed at open into the memory engine's state (jsonl-lines.ts: a torn last line is cut off with a
 * warning), each commit one line written through the group-commit queue (jsonl-writer.ts). Contracts beyond types.ts:
 * - The file is made only once something is written: an agentd that never writes a record leaves no file.
 * - Online compaction: after a group, when the file is over `compactMinBytes` (default 1 MiB) and over twice the
 *   bytes its live records would take, it is rewritten with one line per live record (expired ones dropped) into
 *   `<file>.compacting`, synced, renamed over the file and the folder synced, inside the write queue (no commit waits
 *   on a half-done rewrite; a failed one leaves the old file and is tried again once the file doubled).
 * - Leases live in this process: the folder is held by one process (dir-lock.ts).
 */
import { mkdir, rename, rm, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { systemClock } from '../../clock.ts';
import { AppError, messageOf } from '../../errors/index.ts';
import { syncPath } from '../jsonl-file.ts';
import { nodeFiles, type RecordFile, type RecordFiles } from './jsonl-files.ts';
import { heldBytes, lineOf, replayLines } from './jsonl-lines.ts';
import { createGroupWriter } from './jsonl-writer.ts';
import { overState } from './memory-engine.ts';
import { createRecordState } from './memory-state.ts';
import type { RecordStore, RecordStoreDeps } from './types.ts';
import { prepare } from './writes.ts';

export const RECORDS_FILE = '.agentd-records.jsonl';
const COMPACT_MIN_BYTES = 1 << 20;

export interface JsonlRecordStoreOptions extends RecordStoreDeps {
  dir: string;
  /** The file operations (default node:fs): tests count syncs and fail writes through it. */
  files?: RecordFiles;
  compactMinBytes?: number;
  /** At most this many commits written with one sync (default: all that wait; 1 turns group commit off). */
  maxGroup?: number;
}

const unavailable = (what: string, err: unknown): AppError =>
  new AppError('SERVICE_UNAVAILABLE', `record store: ${what}: ${messageOf(err)}`, {
    reason: 'storage',
    cause: messageOf(err),
  });

export function createJsonlRecordStore(options: JsonlRecordStoreOptions): RecordStore {
  const { dir, log } = options;
  const clock = options.clock ?? systemClock;
  const files = options.files ?? nodeFiles;
  const path = join(dir, RECORDS_FILE);
  const temp = `${path}.compacting`;
  const state = createRecordState(clock, heldBytes);
  let file: RecordFile | undefined;
  /** Bytes of the file up to its last synced line. */
  let size = 0;
  /** No compaction is tried below this size (raised after a failed one). */
  let compactAt = options.compactMinBytes ?? COMPACT_MIN_BYTES;
  let opened = false;
  /** Set when a failed write could not be cut back: the file is suspect until the store is opened again. */
  let broken: AppError | undefined;

  async function write(bytes: Buffer): Promise<void> {
    if (broken) throw broken;
    try {
      if (!file) {
        await mkdir(dir, { recursive: true });
        file = await files.open(path, 'a');
      }
      await file.append(bytes);
      await file.sync();
      size += bytes.length;
    } catch (err) {
      const failed = unavailable(`cannot write ${path}`, err);
      await file?.truncate(size).catch((cut: unknown) => {
        broken = unavailable(`${path} could not be cut back after a failed write; open the store again`, cut);
      });
      log.error({ path, err: messageOf(err) }, 'record store: a write failed; its commits were refused');
      throw failed;
    }
  }

  /** Rewrites the file with the live records only; false (logged, the file kept as it was) when it could not. */
  async function compact(): Promise<boolean> {
    const before = size;
    const live = state.live();
    const bytes = Buffer.from(live.map((held) => lineOf([{ op: 'put', ...held }])).join(''));
    let out: RecordFile | undefined;
    try {
      out = await files.open(temp, 'w');
      await out.append(bytes);
      await out.sync();
      await out.close();
      out = undefined;
      await rename(temp, path);
      size = bytes.length;
      await file?.close().catch(() => undefined);
      file = undefined; // the next write opens the new file
      await syncPath(dir, 'sync');
      log.info({ path, before, after: size, records: live.length }, 'record store: compacted');
      return true;
    } catch (err) {
      await out?.close().catch(() => undefined);
      await rm(temp, { force: true }).catch(() => undefined);
      compactAt = 2 * size;
      log.warn({ path, err: messageOf(err) }, 'record store: compaction failed; the file is kept as it was');
      return false;
    }
  }
  /** Purges waiting for the next look between groups. */
  const purges: ((compacted: boolean) => void)[] = [];

  const writer = createGroupWriter(
    state,
    {
      write,
      async after() {
        const asked = purges.splice(0);
        if (asked.length > 0 || (size > compactAt && size > 2 * state.liveBytes())) {
          const compacted = await compact();
          for (const done of asked) done(compacted);
        }
      },
    },
    options.maxGroup,
  );

  async function open(): Promise<void> {
    if (opened) return;
    state.clear();
    broken = undefined;
    try {
      await rm(temp, { force: true });
      const replayed = await replayLines(path, state.apply, log);
      size = replayed?.validBytes ?? 0;
      if (replayed?.torn) await truncate(path, size);
    } catch (err) {
      throw unavailable(`cannot read ${path}`, err);
    }
    opened = true;
  }

  return overState(state, clock, {
    commit: (writes) => writer.commit(prepare(writes)),
    async purge() {
      await writer.commit([]); // the commits made before are in the file now
      const compacted = new Promise<boolean>((resolve) => purges.push(resolve));
      void writer.commit([]); // a group, after which the file is compacted
      if (!(await compacted)) throw unavailable(`cannot compact ${path}`, new Error('compaction failed'));
    },
    open,
    async close() {
      await writer.drained();
      await file?.close();
      file = undefined;
      opened = false;
    },
    ready() {
      if (!opened) throw new AppError('SERVICE_UNAVAILABLE', 'the record store is not open', { reason: 'storage' });
    },
  });
}
