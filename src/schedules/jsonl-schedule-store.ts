/**
 * The schedule store beside the session logs: one append-only file `.agentd-schedules.jsonl` in `storage.dir`, each
 * change written and fsync'd before it takes effect (a claim is durable before its message is sent), replayed on
 * open. One process owns the folder, as it owns the session logs. The file is made, and held open, only once something
 * is written: an agentd with no schedules leaves no file and holds no descriptor in the folder.
 */
import { mkdir, open as openFile, readFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log/index.ts';
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
      const text = await readFile(path, 'utf8').catch((e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT') return '';
        throw e;
      });
      for (const line of text.split('\n')) {
        if (line.trim() === '') continue;
        try {
          memory.apply(JSON.parse(line) as ScheduleRecord);
        } catch {
          log.warn({ path }, 'a torn line of the schedule store was skipped');
        }
      }
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
