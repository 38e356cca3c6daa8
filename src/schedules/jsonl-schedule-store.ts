/**
 * The schedule store beside the session logs: one append-only file `.agentd-schedules.jsonl` in `storage.dir`, each
 * change written and fsync'd before it takes effect (a claim is durable before its message is sent), replayed on
 * open. One process owns the folder, as it owns the session logs. The file is made, and held open, only once something
 * is written: an agentd with no schedules leaves no file and holds no descriptor in the folder.
 */
import { mkdir, open as openFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log/index.ts';
import { replayRecords } from '../store/jsonl-records.ts';
import { createMemoryScheduleStore, type ScheduleRecord } from './memory-schedule-store.ts';
import type { ScheduleStore } from './store-types.ts';

export const SCHEDULES_FILE = '.agentd-schedules.jsonl';

export function createJsonlScheduleStore(dir: string, log: Logger): ScheduleStore {
  const path = join(dir, SCHEDULES_FILE);
  let opened = false;
  let file: FileHandle | undefined;
  let writing: Promise<void> = Promise.resolve();
  const append = (record: ScheduleRecord): Promise<void> => {
    const write = writing.then(async () => {
      if (!opened) throw new Error('the schedule store is not open');
      file ??= await openFile(path, 'a');
      await file.appendFile(`${JSON.stringify(record)}\n`);
      await file.sync();
    });
    writing = write.catch(() => {});
    return write;
  };
  const memory = createMemoryScheduleStore(append);
  return {
    ...memory,
    async open() {
      await mkdir(dir, { recursive: true });
      await replayRecords<ScheduleRecord>(path, (r) => memory.apply(r), log, 'schedule store');
      opened = true;
    },
    async close() {
      await writing;
      await file?.close();
      file = undefined;
      opened = false;
    },
  };
}
