/**
 * The JSONL store's sessions by update time and turn totals across starts (jsonl-recency*.ts): saved beside the logs,
 * taken whole after a clean close, checked against the files after anything else (a crash after writes, an agentd that
 * does not know the snapshot, a snapshot torn, corrupt or put back), and exact every time.
 */
import { describe, expect, it } from 'vitest';
import { appendFile, cp, readFile, rm, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { sessionKey } from '../../src/session-id.ts';
import { fileNameOf } from '../../src/store/session-file-name.ts';
import type { EventStore } from '../../src/store/types.ts';
import type { SessionEvent } from '../../src/conversation/session-events.ts';
import { jsonlStores } from './jsonl-fixture.ts';
import { manualClock, user } from './store-contract.ts';

const { tempDir, openStore } = jsonlStores('agentd-recency-');
const SNAPSHOT = join('.agentd-recency', 'sessions.json');
const MARK = join('.agentd-recency', 'closed.json');
const alice = (id: string) => sessionKey('alice', id);
const bob = (id: string) => sessionKey('bob', id);

/** A store over `dir` on the shared clock, opened, with the builds it logged. */
async function opened(dir: string, clock = manualClock(), extra: { recencySaveMs?: number } = {}) {
  const builds: { from: string; read: number; sessions: number }[] = [];
  const log = pino({ level: 'debug' }, { write: (line: string) => void builds.push(JSON.parse(line) as never) });
  const { store } = openStore(dir, { log, clock, ...extra });
  await store.open();
  const built = () => builds.filter((b) => 'from' in b);
  return { store, clock, built };
}

/** Everything `recent` and `turnTotal` answer, to compare two stores. */
async function view(store: EventStore<SessionEvent>) {
  const page = await store.recent({ limit: 100 });
  const owners = await Promise.all(['alice', 'bob', ''].map((o) => store.turnTotal(o)));
  const recent = page.sessions.map((s) => [s.id, s.lastSeq, s.updatedAt]);
  const alices = (await store.recent({ owner: 'alice', limit: 100 })).sessions.map((s) => s.id);
  return { recent, total: page.total, alices, owners, all: await store.turnTotal() };
}

/** Sessions of two owners and none, one to three turns each, each written later than the one before. */
async function fill(store: EventStore<SessionEvent>, clock: ReturnType<typeof manualClock>) {
  const writes: [string, string[]][] = [
    [alice('a1'), ['t1']],
    [bob('b1'), ['t1', 't2']],
    [alice('a2'), ['t1', 't2', 't3']],
    ['plain', ['t1']],
    [alice('a3'), ['t1', 't1']],
    [bob('b2'), ['t1']],
  ];
  for (const [id, turns] of writes) {
    clock.advance(1000);
    for (const t of turns) await store.append(id, [user(`${id} ${t}`, t)]);
  }
}

/** Moves every session file's time back a minute: written well before a snapshot taken now. */
async function age(dir: string, ids: string[]) {
  const then = new Date(Date.now() - 60_000);
  for (const id of ids) await utimes(join(dir, fileNameOf(id)), then, then);
}
const IDS = [alice('a1'), bob('b1'), alice('a2'), 'plain', alice('a3'), bob('b2')];

/** The directory as a `kill -9` of its store leaves it, in another folder (without the lock: its holder is gone). */
async function crashImage(dir: string): Promise<string> {
  const crashed = await tempDir();
  await cp(dir, crashed, { recursive: true, preserveTimestamps: true });
  await rm(join(crashed, '.agentd-lock'), { force: true });
  return crashed;
}

/** Until the file system's clock is past the directory's time: a start after it moves the directory's time. */
async function clockPast(dir: string): Promise<void> {
  const { mtimeNs } = await stat(dir, { bigint: true });
  const probe = join(await tempDir(), 'tick');
  await expect
    .poll(async () => {
      await writeFile(probe, '');
      return (await stat(probe, { bigint: true })).mtimeNs > mtimeNs;
    })
    .toBe(true);
}

describe('jsonl store: sessions by update time across starts', () => {
  it('takes them whole from the snapshot a clean close marked', async () => {
    const dir = await tempDir();
    const first = await opened(dir);
    await fill(first.store, first.clock);
    const before = await view(first.store);
    expect(before.recent.map((r) => r[0])).toEqual([...IDS].reverse());
    expect(before.owners).toEqual([1 + 3 + 1, 2 + 1, 1]);
    await first.store.close();
    expect(JSON.parse(await readFile(join(dir, SNAPSHOT), 'utf8'))).toMatchObject({ v: 1, ids: IDS });
    await readFile(join(dir, MARK), 'utf8');

    const second = await opened(dir);
    expect(await view(second.store)).toEqual(before);
    expect(second.built()).toMatchObject([{ from: 'closed snapshot', read: 0, sessions: 6 }]);
    await expect(readFile(join(dir, MARK))).rejects.toMatchObject({ code: 'ENOENT' }); // taken: a crash now leaves none
  });

  it('after a crash, reads again exactly the files written since the snapshot (appended, deleted, new)', async () => {
    const dir = await tempDir();
    const first = await opened(dir);
    await fill(first.store, first.clock);
    await first.store.close();
    await age(dir, IDS);

    const second = await opened(dir, first.clock);
    first.clock.advance(1000);
    await second.store.append(alice('a1'), [user('a new turn', 't9')]); // the oldest becomes the newest
    await second.store.delete(bob('b1'));
    first.clock.advance(1000);
    await second.store.append(alice('a4'), [user('new', 't1'), user('new', 't2')]);
    const expected = await view(second.store);
    expect(expected.recent.map((r) => r[0]).slice(0, 2)).toEqual([alice('a4'), alice('a1')]);
    expect(expected.owners).toEqual([1 + 1 + 3 + 1 + 2, 1, 1]);
    // kill -9 now: the files as they are (a journal too), no snapshot since the one the close saved
    const crashed = await crashImage(dir);
    await second.store.close();

    const third = await opened(crashed, first.clock);
    expect(await view(third.store)).toEqual(expected);
    expect(third.built()).toMatchObject([{ from: 'snapshot checked against the files', read: 2, sessions: 6 }]);
  });

  it('checks the files when another agentd started since the close (one that does not know the snapshot)', async () => {
    const dir = await tempDir();
    const first = await opened(dir);
    await fill(first.store, first.clock);
    await first.store.close();
    await clockPast(dir);
    // What any agentd does: probe the directory at its start, then write; this one appends a turn to plain
    await writeFile(join(dir, '.agentd-write-check-1'), '');
    await unlink(join(dir, '.agentd-write-check-1'));
    const line = { seq: 2, ts: '2030-01-01T00:00:00.000Z', sessionId: 'plain', event: user('later', 't2') };
    await appendFile(join(dir, fileNameOf('plain')), JSON.stringify(line) + '\n');

    const second = await opened(dir);
    const seen = await view(second.store);
    expect(seen.recent[0]).toEqual(['plain', 2, '2030-01-01T00:00:00.000Z']);
    expect(seen.owners).toEqual([5, 3, 2]);
    expect(second.built()).toMatchObject([{ from: 'snapshot checked against the files' }]);
  });

  it('checks the files when the store wrote before it opened', async () => {
    const dir = await tempDir();
    const first = await opened(dir);
    await fill(first.store, first.clock);
    await first.store.close();
    const { store } = openStore(dir, { clock: first.clock, fsync: false }); // no journal made in the directory
    first.clock.advance(1000);
    await store.append('plain', [user('early', 't2')]); // a file that grows: the directory stays as the close left it
    await store.open();
    const seen = await view(store);
    expect(seen.recent[0]?.[0]).toBe('plain');
    expect(seen.owners).toEqual([5, 3, 2]);
  });

  it('ignores a torn or corrupt snapshot, and checks one put back from an earlier close against the files', async () => {
    const dir = await tempDir();
    const first = await opened(dir);
    await fill(first.store, first.clock);
    await first.store.close();
    const earlier = await readFile(join(dir, SNAPSHOT));
    const second = await opened(dir, first.clock);
    first.clock.advance(1000);
    await second.store.append('plain', [user('again', 't2')]);
    await second.store.append(bob('b3'), [user('new', 't1')]);
    const expected = await view(second.store);
    await second.store.close();

    const corrupt = [
      '{"v":1,"at":1,"files":[',
      JSON.stringify({ ...JSON.parse(earlier.toString('utf8')), seqs: [1] }), // columns of different lengths
      '',
    ];
    for (const text of corrupt) {
      await writeFile(join(dir, SNAPSHOT), text);
      const again = await opened(dir);
      expect(await view(again.store)).toEqual(expected);
      expect(again.built()).toMatchObject([{ from: 'files', read: 7 }]);
      await again.store.close(); // saves a good one again
      await writeFile(join(dir, MARK), '{');
      const after = await opened(dir);
      expect(await view(after.store)).toEqual(expected);
      expect(after.built()).toMatchObject([{ from: 'snapshot checked against the files' }]);
      await after.store.close();
    }
    await writeFile(join(dir, SNAPSHOT), earlier); // the close's mark names another snapshot
    const put = await opened(dir);
    expect(await view(put.store)).toEqual(expected);
    expect(put.built()).toMatchObject([{ from: 'snapshot checked against the files' }]);
  });

  it('saves a snapshot while it runs, so a crash reads only what changed after it', async () => {
    const dir = await tempDir();
    const first = await opened(dir, manualClock(), { recencySaveMs: 10 });
    await fill(first.store, first.clock);
    const saved = () =>
      readFile(join(dir, SNAPSHOT), 'utf8').then(
        (t) => (JSON.parse(t) as { ids: string[] }).ids,
        () => [],
      );
    await expect.poll(saved).toEqual(IDS);
    await age(dir, IDS);
    const crashed = await crashImage(dir);
    // a line in a file after the snapshot (what a write the crash cut short, or a journal's replay, leaves)
    const line = { seq: 2, ts: '2030-01-01T00:00:00.000Z', sessionId: bob('b2'), event: user('later', 't2') };
    await appendFile(join(crashed, fileNameOf(bob('b2'))), JSON.stringify(line) + '\n');

    const second = await opened(crashed);
    const seen = await view(second.store);
    expect(seen.recent[0]).toEqual([bob('b2'), 2, '2030-01-01T00:00:00.000Z']);
    expect(seen.owners).toEqual([5, 4, 1]);
    expect(second.built()).toMatchObject([{ from: 'snapshot checked against the files', read: 1, sessions: 6 }]);
  });
});
