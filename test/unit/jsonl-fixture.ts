/**
 * Temporary folders and JSONL stores over them for the JSONL store's tests (jsonl-store, jsonl-journal):
 * every store is closed and every folder removed after each test.
 */
import { afterEach } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createJsonlStore, type JsonlStoreOptions } from '../../src/store/jsonl-store.ts';
import type { EventStore } from '../../src/store/types.ts';
import { parseSessionEvent, type SessionEvent } from '../../src/conversation/session-events.ts';
import { manualClock } from './store-contract.ts';

/** Registers the clean-up of the calling test file; folders are named `<prefix>…` in the temp folder. */
export function jsonlStores(prefix: string) {
  const dirs: string[] = [];
  const stores: EventStore<SessionEvent>[] = [];
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  });

  async function tempDir(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  }

  /** A store over `dir` whose warnings are captured. */
  function openStore(dir: string, extra: Partial<JsonlStoreOptions<SessionEvent>> = {}) {
    const logs: { level: number; msg: string; file?: string }[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void logs.push(JSON.parse(line) as never) });
    const clock = manualClock();
    const store = createJsonlStore({ dir, log, clock, parseEvent: parseSessionEvent, ...extra });
    stores.push(store);
    const warnings = () => logs.filter((l) => l.level === 40);
    return { store, clock, logs, warnings };
  }

  return { tempDir, openStore };
}

/** The contents of user-message events, in order. */
export const contents = (events: { event: unknown }[]) => events.map((e) => (e.event as { content: string }).content);
