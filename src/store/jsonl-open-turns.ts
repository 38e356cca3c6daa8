/**
 * The JSONL store's marks of sessions with a turn open (`.agentd-open-turns/<file>`, holding the session's key), so a
 * restart finds the turns its process left running without reading every log.
 * - A mark is set when a turn starts and removed when it ends (the agent tells: `markOpenTurn`, and waits for the
 *   mark before its turn is acknowledged or its model asked: src/agent/session/open-mark.ts); each is one small file
 *   written or removed, and the marks of one session apply in call order. Marks are not synced and never change the
 *   logs' directory (jsonl-listing.ts): one lost with the machine's power leaves that turn to be resumed when its
 *   session is next used.
 * - A mark is written and removed on the calling thread (page-cache writes, a few µs each): through the libuv pool its
 *   open, write, close and unlink were four hand-offs per turn, ~0.2 ms of CPU per turn here (bench/README.md).
 */
import { mkdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isMissing } from './jsonl-file.ts';
import { fileNameOf } from './session-file-name.ts';

const MARKS_DIR = '.agentd-open-turns';

export function createOpenTurnMarks(dir: string) {
  const folder = join(dir, MARKS_DIR);
  /** Each session's last mark, so the next waits for it. */
  const chains = new Map<string, Promise<void>>();
  const apply = (sessionId: string, open: boolean): void => {
    const path = join(folder, fileNameOf(sessionId));
    if (!open) {
      try {
        unlinkSync(path);
      } catch (e) {
        if (!isMissing(e)) throw e;
      }
      return;
    }
    try {
      writeFileSync(path, sessionId);
    } catch (e) {
      if (!isMissing(e)) throw e;
      mkdirSync(folder, { recursive: true }); // the first mark (one syscall per mark after it)
      writeFileSync(path, sessionId);
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
