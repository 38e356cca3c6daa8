import { afterEach, describe, expect, it, vi } from 'vitest';
import fs, { readdirSync, readlinkSync } from 'node:fs';
import { open, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { storedLine } from '../../src/store/stored-event.ts';
import { user } from './store-contract.ts';
import { contents, jsonlStores } from './jsonl-fixture.ts';

const { tempDir, openStore } = jsonlStores('agentd-journal-');
afterEach(() => vi.restoreAllMocks()); // runs before the fixture's clean-up: the stores close with real writes

const journals = (dir: string) => readdirSync(dir).filter((n) => n.startsWith('.agentd-journal-'));
const seqsOnDisk = async (path: string) =>
  (await readFile(path, 'utf8'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { seq: number }).seq);
const TS = '2025-01-02T03:04:05.678Z';
const line = (seq: number, sessionId: string, content: string) =>
  storedLine(seq, TS, sessionId, JSON.stringify(user(content)));

type Write = (this: { fd: number }, ...args: unknown[]) => Promise<unknown>;

/** Wraps every FileHandle write; `journal` is called for writes to a journal file. */
async function interceptJournalWrites(journal: (real: () => Promise<unknown>, bytes: Buffer) => Promise<unknown>) {
  const probe = await open(join(tmpdir(), `agentd-probe-${process.pid}`), 'w');
  const proto = Object.getPrototypeOf(probe) as { write: Write };
  await probe.close();
  const real = proto.write;
  return vi.spyOn(proto, 'write').mockImplementation(function (this: { fd: number }, ...args: unknown[]) {
    const target = readlinkSync(`/proc/self/fd/${this.fd}`);
    if (!/\.agentd-journal-\d+$/.test(target)) return real.apply(this, args);
    return journal(() => real.apply(this, args), args[0] as Buffer);
  });
}

describe('jsonl store: group commit', () => {
  it('acknowledges the appends of many sessions only after the journal write that holds them returned', async () => {
    const dir = await tempDir();
    const { store } = openStore(dir);
    const ids = Array.from({ length: 20 }, (_, i) => `s${i}`);
    await Promise.all(ids.map((id) => store.append(id, [user('first')])));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const durable = new Set<string>();
    let groups = 0;
    await interceptJournalWrites(async (real, bytes) => {
      groups++;
      await held;
      const result = await real();
      for (const id of ids) if (bytes.includes(`"sessionId":"${id}"`)) durable.add(id);
      return result;
    });
    const acked: string[] = [];
    const all = Promise.all(
      ids.map((id) =>
        store.append(id, [user('second')]).then((stored) => {
          expect(durable.has(id)).toBe(true); // its journal write returned before it resolved
          acked.push(id);
          return stored;
        }),
      ),
    );
    // every session file holds its line (written before the journal), none is acknowledged yet
    await vi.waitFor(async () => {
      for (const id of ids) expect(await seqsOnDisk(join(dir, `${id}.jsonl`))).toEqual([1, 2]);
    });
    expect(acked).toEqual([]);
    release();
    expect((await all).map((r) => r[0]?.seq)).toEqual(ids.map(() => 2));
    // at most three group writes are in flight; all that came while they were held went in one more
    expect(groups).toBeLessThanOrEqual(4);
  });

  it('rejects every append of a group whose journal write fails, and keeps nothing of it', async () => {
    const dir = await tempDir();
    const { store } = openStore(dir);
    const ids = Array.from({ length: 10 }, (_, i) => `f${i}`);
    await Promise.all(ids.map((id) => store.append(id, [user('kept')])));
    let failing = true;
    const writes = await interceptJournalWrites(async (real) => {
      if (!failing) return real();
      await real(); // the bytes land, then the write "fails" (e.g. its sync does)
      throw Object.assign(new Error('disk full'), { code: 'EIO' });
    });
    const results = await Promise.allSettled(ids.map((id) => store.append(id, [user('lost'), user('lost too')])));
    for (const r of results)
      expect(r).toMatchObject({ status: 'rejected', reason: { code: 'INTERNAL_ERROR', details: { cause: 'EIO' } } });
    failing = false;
    for (const id of ids) {
      expect(contents(await store.read(id))).toEqual(['kept']);
      expect(await seqsOnDisk(join(dir, `${id}.jsonl`))).toEqual([1]);
    }
    expect((await store.list()).map((s) => s.lastSeq)).toEqual(ids.map(() => 1));
    expect((await store.append('f0', [user('next')]))[0]?.seq).toBe(2); // seq stays consecutive
    writes.mockRestore();
    // a start after a crash (no close) replays only what was acknowledged
    const { store: again } = openStore(dir);
    expect(contents(await again.read('f0'))).toEqual(['kept', 'next']);
    expect(contents(await again.read('f1'))).toEqual(['kept']);
  });

  it('rejects a batch whose file write fails though its journal write returned, and a start never replays it', async () => {
    const dir = await tempDir();
    const { store } = openStore(dir);
    await store.append('w', [user('kept')]);
    const real = fs.writeSync; // the session file's write (jsonl-file.ts writeAllNow)
    const writes = vi.spyOn(fs, 'writeSync').mockImplementation((...args: Parameters<typeof fs.writeSync>) => {
      real(...args); // the bytes land, then the write "fails"
      throw Object.assign(new Error('disk full'), { code: 'ENOSPC' });
    });
    await expect(store.append('w', [user('lost'), user('lost too')])).rejects.toMatchObject({
      code: 'INTERNAL_ERROR',
      details: { cause: 'ENOSPC' },
    });
    writes.mockRestore();
    expect(contents(await store.read('w'))).toEqual(['kept']);
    expect(await seqsOnDisk(join(dir, 'w.jsonl'))).toEqual([1]);
    expect((await readFile(join(dir, journals(dir)[0]!), 'utf8')).match(/lost/g)).toHaveLength(2); // journaled
    // a start after a crash (no close): the journal withdrew them
    const { store: again } = openStore(dir);
    expect(contents(await again.read('w'))).toEqual(['kept']);
  });
});

describe('jsonl store: recovery from the journal', () => {
  it('replays journaled lines the session files lack, without duplicating those they hold; skips torn groups and tail', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'a.jsonl'), [line(1, 'a', 'a1'), line(2, 'a', 'a2')].join('\n') + '\n');
    await writeFile(join(dir, 'c.jsonl'), line(1, 'c', 'c1') + '\n' + line(2, 'c', 'c2').slice(0, 30)); // torn
    const journal = [
      line(2, 'a', 'a2'), // already in its file
      line(3, 'a', 'a3'),
      '{"seq":1,"ts":"2025-01-02T03:04:0', // a group torn by a crash (another session's, never acknowledged)
      ' '.repeat(40), // a group blanked out after its write failed
      line(1, 'b', 'b1'), // its file was never written
      line(2, 'c', 'c2'),
      line(4, 'a', 'a4'),
    ];
    const torn = line(5, 'a', 'never acknowledged').slice(0, 40);
    await writeFile(join(dir, '.agentd-journal-3'), journal.join('\n') + '\n' + torn);

    const { store, warnings } = openStore(dir);
    await store.open();
    expect(journals(dir)).toEqual([]); // replayed, synced, removed
    expect(await seqsOnDisk(join(dir, 'a.jsonl'))).toEqual([1, 2, 3, 4]);
    expect(contents(await store.read('a'))).toEqual(['a1', 'a2', 'a3', 'a4']);
    expect(contents(await store.read('b'))).toEqual(['b1']);
    expect(contents(await store.read('c'))).toEqual(['c1', 'c2']);
    expect(await seqsOnDisk(join(dir, 'c.jsonl'))).toEqual([1, 2]);
    expect(warnings().map((w) => w.msg)).toEqual(
      expect.arrayContaining([
        'event store: cut the torn tail of a journal',
        'event store: skipped journal lines that hold no record',
        'event store: replayed journaled appends into session files',
      ]),
    );
    expect((await store.append('a', [user('a5')]))[0]?.seq).toBe(5);
    expect(journals(dir)).toEqual(['.agentd-journal-4']); // numbered on after the replayed one
  });

  it('replays before any read, also without open(): list, has and read see the journaled appends', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, '.agentd-journal-1'), [line(1, 'x', 'x1'), line(2, 'x', 'x2')].join('\n') + '\n');
    const { store } = openStore(dir);
    expect(await store.list()).toMatchObject([{ id: 'x', lastSeq: 2 }]);
    expect(await store.has('x')).toBe(true);
    expect(contents(await store.read('x', 1))).toEqual(['x2']);
  });

  it('never brings back a deleted session, though its appends were journaled', async () => {
    const dir = await tempDir();
    const { store } = openStore(dir);
    await store.append('gone', [user('1'), user('2')]);
    await store.append('stays', [user('1')]);
    expect(await store.delete('gone')).toBe(true);
    // a start after a crash (the first store never closed)
    const { store: again } = openStore(dir);
    expect(await again.read('gone')).toEqual([]);
    expect(contents(await again.read('stays'))).toEqual(['1']);
  });
});

describe('jsonl store: checkpoints', () => {
  it('past journalMaxBytes, syncs the session files and removes the journal; the files stay complete', async () => {
    const dir = await tempDir();
    const { store } = openStore(dir, { journalMaxBytes: 1 });
    for (let round = 1; round <= 3; round++)
      await Promise.all(['p', 'q', 'r'].map((id) => store.append(id, [user(`${id}${round}`)])));
    await vi.waitFor(() => expect(journals(dir)).toEqual([]));
    for (const id of ['p', 'q', 'r']) expect(await seqsOnDisk(join(dir, `${id}.jsonl`))).toEqual([1, 2, 3]);
    expect((await store.append('p', [user('p4')]))[0]?.seq).toBe(4);
  });

  it('after journalIdleMs without a write, and at close, leaves no journal and every file complete', async () => {
    const dir = await tempDir();
    const idle = openStore(dir, { journalIdleMs: 20 });
    await idle.store.append('i', [user('1'), user('2')]);
    expect(journals(dir)).toHaveLength(1);
    await vi.waitFor(() => expect(journals(dir)).toEqual([]));

    const closing = openStore(dir).store;
    const pending = Array.from({ length: 30 }, (_, n) => closing.append(`c${n % 5}`, [user(String(n))]));
    await closing.close();
    await Promise.all(pending);
    expect(journals(dir)).toEqual([]);
    for (let s = 0; s < 5; s++) expect(await seqsOnDisk(join(dir, `c${s}.jsonl`))).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await seqsOnDisk(join(dir, 'i.jsonl'))).toEqual([1, 2]);
  });
});
