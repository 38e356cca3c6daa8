/** The JSONL store's turn index (src/store/jsonl-turns.ts): saved beside the logs, trusted only while it describes its log. */
import { afterEach, describe, expect, it } from 'vitest';
import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createJsonlStore, type JsonlStoreOptions } from '../../src/store/jsonl-store.ts';
import { storedLine } from '../../src/store/stored-event.ts';
import type { EventStore } from '../../src/store/types.ts';
import { parseSessionEvent, type SessionEvent } from '../../src/conversation/session-events.ts';
import { manualClock, user } from './store-contract.ts';

const dirs: string[] = [];
const stores: EventStore<SessionEvent>[] = [];
const log = pino({ level: 'silent' });

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agentd-turns-'));
  dirs.push(dir);
  return dir;
}
function openStore(dir: string, extra: Partial<JsonlStoreOptions<SessionEvent>> = {}) {
  const store = createJsonlStore({ dir, log, clock: manualClock(), parseEvent: parseSessionEvent, ...extra });
  stores.push(store);
  return store;
}
const seqs = (events: { seq: number }[]) => events.map((e) => e.seq);
const savedIndex = (dir: string, file: string) =>
  readFile(join(dir, '.agentd-turns', file.replace(/\.jsonl$/, '.turns')), 'utf8');

afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

describe('jsonl store: turn index', () => {
  it('builds the index of a log written without one, once, and saves it beside the log when it leaves memory', async () => {
    const dir = await tempDir();
    const before = openStore(dir);
    for (let t = 0; t < 20; t++) await before.append('s', [user(`q${t}`, `t${t}`), user(`more ${t}`, `t${t}`)]);
    await before.close();
    expect(await readdir(dir)).toEqual(['s.jsonl']); // nobody asked for its turns: no index yet

    const after = openStore(dir, { maxCachedEvents: 4 });
    expect(seqs(await after.readTurn('s', 't3'))).toEqual([7, 8]);
    expect((await after.turns('s', { after: 36 })).map((t) => t.turnId)).toEqual(['t18', 't19']);
    await after.append('s', [user('late', 't3')]);
    expect(seqs(await after.readTurn('s', 't3'))).toEqual([7, 8, 41]);
    await after.close();
    expect(JSON.parse(await savedIndex(dir, 's.jsonl'))).toMatchObject({ v: 1, to: 41 });

    const again = openStore(dir, { maxCachedEvents: 4 });
    expect(seqs(await again.readTurn('s', 't3'))).toEqual([7, 8, 41]);
    expect(await again.turns('s', { limit: 1 })).toEqual([{ turnId: 't0', firstSeq: 1, lastSeq: 2 }]);
  });

  it('indexes what was appended after the saved index (an older agentd, a crash before the save) from where it stops', async () => {
    const dir = await tempDir();
    const first = openStore(dir);
    await first.append('s', [user('a', 'ta'), user('b', 'tb')]);
    await first.turns('s'); // loaded: saved at close
    await first.close();
    // Lines an agentd without indexes appended.
    const ts = '2025-01-02T03:04:05.678Z';
    await appendFile(
      join(dir, 's.jsonl'),
      [
        storedLine(3, ts, 's', JSON.stringify(user('c', 'ta'))),
        storedLine(4, ts, 's', JSON.stringify(user('d', 'tc'))),
      ].join('\n') + '\n',
    );
    const second = openStore(dir, { maxCachedEvents: 1 });
    expect(await second.turns('s')).toEqual([
      { turnId: 'ta', firstSeq: 1, lastSeq: 3 },
      { turnId: 'tb', firstSeq: 2, lastSeq: 2 },
      { turnId: 'tc', firstSeq: 4, lastSeq: 4 },
    ]);
    expect(seqs(await second.readTurn('s', 'ta'))).toEqual([1, 3]);
  });

  it('does not trust a saved index that describes another log under the same name', async () => {
    const dir = await tempDir();
    const first = openStore(dir);
    await first.append('s', [user('a', 'old'), user('b', 'old')]);
    await first.turns('s');
    await first.close();
    const saved = await savedIndex(dir, 's.jsonl');
    // The session is deleted and made again; the old index is put back beside the new log.
    const second = openStore(dir);
    await second.delete('s');
    await second.create('s', [
      { seq: 1, ts: '2024-05-01T00:00:00.000Z', event: user('x', 'new') },
      { seq: 2, ts: '2024-05-01T00:00:01.000Z', event: user('y', 'new') },
    ]);
    await second.close();
    await mkdir(join(dir, '.agentd-turns'), { recursive: true });
    await writeFile(join(dir, '.agentd-turns', 's.turns'), saved);
    const third = openStore(dir);
    expect(await third.turns('s')).toEqual([{ turnId: 'new', firstSeq: 1, lastSeq: 2 }]);
    expect(await third.readTurn('s', 'old')).toEqual([]);
  });

  it('keeps the indexes of the sessions used last in memory up to maxIndexedTurns; the others are saved and read back', async () => {
    const dir = await tempDir();
    const store = openStore(dir, { maxIndexedTurns: 4, maxCachedEvents: 1 }); // two sessions of one turn each
    for (const id of ['a', 'b', 'c', 'd']) await store.append(id, [user(id, `t-${id}`), user(`${id}2`, `t-${id}`)]);
    for (const id of ['a', 'b', 'c', 'd']) expect(seqs(await store.readTurn(id, `t-${id}`))).toEqual([1, 2]);
    await expect
      .poll(async () => (await readdir(join(dir, '.agentd-turns')).catch(() => [])).sort())
      .toEqual(['a.turns', 'b.turns']);
    await store.append('a', [user('a3', 't-a')]);
    expect(seqs(await store.readTurn('a', 't-a'))).toEqual([1, 2, 3]);
  });

  it('keeps the indexes of a working set of 200 sessions in memory by default: their appends write no index to disk', async () => {
    const dir = await tempDir();
    const store = openStore(dir);
    await store.open(); // builds the kept turn totals: from now on every append counts its session's turns
    const ids = Array.from({ length: 200 }, (_, i) => `s${i}`);
    for (const round of [1, 2, 3]) for (const id of ids) await store.append(id, [user(`${round}`, `t-${id}-${round}`)]);
    expect(await store.turnTotal()).toBe(600);
    expect(seqs(await store.readTurn('s0', 't-s0-2'))).toEqual([2]);
    expect(await readdir(join(dir, '.agentd-turns')).catch(() => [])).toEqual([]); // none pushed out, none read back
  });

  it('lists a session another writer made in the directory, and stops listing one it removed', async () => {
    const dir = await tempDir();
    const store = openStore(dir);
    await store.append('a', [user('a', 't')]);
    expect((await store.list({ limit: 10 })).map((s) => s.id)).toEqual(['a']);
    const other = openStore(dir);
    await other.append('b', [user('b', 't')]);
    expect((await store.list({ limit: 10 })).map((s) => s.id)).toEqual(['a', 'b']);
    expect((await store.list({ after: 'a', limit: 1 })).map((s) => s.id)).toEqual(['b']);
    await other.delete('a');
    expect((await store.list({ limit: 10 })).map((s) => s.id)).toEqual(['b']);
  });

  it('a deleted session leaves no index behind', async () => {
    const dir = await tempDir();
    const store = openStore(dir);
    await store.append('gone', [user('x', 't')]);
    await store.turns('gone');
    await store.close();
    const again = openStore(dir);
    await again.turns('gone');
    await again.delete('gone');
    await again.close();
    expect(await readdir(join(dir, '.agentd-turns'))).toEqual([]);
  });
});
