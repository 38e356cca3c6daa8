/**
 * The outbox on the JSONL medium: one append-only file, `<dir>/.agentd-outbox.jsonl`, beside the session logs (one
 * agentd process per folder, as for the sessions). Each change is a line, written and fsync'd before it applies; the
 * file is replayed at open (a torn last line is skipped) and rewritten then with only the current state, finished
 * deliveries older than `keepFinishedMs` left out. The file is made, and held open, only once something is written: an
 * agentd with no webhooks leaves no file and holds no descriptor in the folder.
 */
import { mkdir, open as openFile, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log/index.ts';
import { replayRecords } from '../store/jsonl-records.ts';
import { createOutboxState, outboxOverState, type EarlierOutbox, type OutboxLine } from './outbox-store.ts';

export const OUTBOX_FILE = '.agentd-outbox.jsonl';
/** How long delivered and failed deliveries stay listed (`GET /api/webhooks/{id}/deliveries`). */
const KEEP_FINISHED_MS = 7 * 24 * 3_600_000;

export function createJsonlOutbox(options: { dir: string; log: Logger; keepFinishedMs?: number }): EarlierOutbox {
  const path = join(options.dir, OUTBOX_FILE);
  const keep = options.keepFinishedMs ?? KEEP_FINISHED_MS;
  const state = createOutboxState();
  let opened = false;
  let handle: FileHandle | undefined;
  let writing: Promise<void> = Promise.resolve();

  /** Rewrites the file with the current state (atomically: a temporary file renamed over it). */
  async function compact(): Promise<void> {
    const cutoff = Date.now() - keep;
    for (const [id, d] of state.deliveries)
      if (d.status !== 'pending' && (d.deliveredAt ?? d.nextAttemptAt) < cutoff) state.deliveries.delete(id);
    const lines = [
      ...[...state.hooks.values()].map((webhook): OutboxLine => ({ kind: 'webhook', webhook })),
      ...[...state.deliveries.values()].map((delivery): OutboxLine => ({ kind: 'delivery', delivery })),
    ];
    const temp = `${path}.${process.pid}.tmp`;
    const out = await openFile(temp, 'w', 0o600);
    try {
      await out.writeFile(lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
      await out.sync();
    } finally {
      await out.close();
    }
    await rename(temp, path);
  }

  const write = (line: OutboxLine): Promise<void> => {
    const next = writing.then(async () => {
      if (!opened) throw new Error('webhook outbox: not open');
      handle ??= await openFile(path, 'a', 0o600);
      await handle.appendFile(`${JSON.stringify(line)}\n`);
      await handle.datasync();
    });
    writing = next.catch(() => undefined);
    return next;
  };

  return outboxOverState(state, write, {
    async open() {
      if (opened) return;
      await mkdir(options.dir, { recursive: true });
      if (await replayRecords<OutboxLine>(path, (l) => state.apply(l), options.log, 'webhook outbox')) await compact();
      opened = true;
    },
    async close() {
      await writing;
      await handle?.close();
      handle = undefined;
      opened = false;
    },
  });
}
