/**
 * The JSONL store's marks of sessions with a turn open (`.agentd-open-turns/<file>`, holding the session's key), so a
 * restart finds the turns its process left running without reading every log.
 * - A mark is set when a turn starts and removed when it ends (the agent tells: `markOpenTurn`, and waits for the
 *   mark before its turn is acknowledged or its model asked: src/agent/session/open-mark.ts); each is one small file
 *   written or removed, and the marks of one session apply in call order. Marks are not synced and never change the
 *   logs' directory (jsonl-listing.ts): one lost with the machine's power leaves that turn to be resumed when its
 *   session is next used.
 */
import { mkdir, readdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isMissing } from './jsonl-file.ts';
import { fileNameOf } from './session-file-name.ts';

const MARKS_DIR = '.agentd-open-turns';

export function createOpenTurnMarks(dir: string) {
  const folder = join(dir, MARKS_DIR);
  /** Each session's last mark, so the next waits for it. */
  const chains = new Map<string, Promise<void>>();
  const apply = async (sessionId: string, open: boolean) => {
    const path = join(folder, fileNameOf(sessionId));
    if (!open) {
      try {
        await unlink(path);
      } catch (e) {
        if (!isMissing(e)) throw e;
      }
      return;
    }
    try {
      await writeFile(path, sessionId);
    } catch (e) {
      if (!isMissing(e)) throw e;
      await mkdir(folder, { recursive: true }); // the first mark (one syscall per mark after it)
      await writeFile(path, sessionId);
    }
  };
  return {
    mark(sessionId: string, open: boolean): Promise<void> {
      const done = (chains.get(sessionId) ?? Promise.resolve()).then(() => apply(sessionId, open));
      const settled = done.catch(() => undefined);
      chains.set(sessionId, settled);
      void settled.then(() => chains.get(sessionId) === settled && chains.delete(sessionId));
      return done;
    },
    async list(): Promise<string[]> {
      let names: string[];
      try {
        names = await readdir(folder);
      } catch (e) {
        if (isMissing(e)) return [];
        throw e;
      }
      const ids = await Promise.all(names.map((n) => readFile(join(folder, n), 'utf8').catch(() => undefined)));
      return ids.filter((id): id is string => id !== undefined && id !== '');
    },
  };
}
