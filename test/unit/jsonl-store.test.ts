import { describe, expect, it, vi } from 'vitest';
import fs, { existsSync, readdirSync } from 'node:fs';
import { appendFile, mkdir, open, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { createStore } from '../../src/store/index.ts';
import { fileNameOf } from '../../src/store/session-file-name.ts';
import { sessionKey } from '../../src/session-id.ts';
import { parseSessionEvent } from '../../src/conversation/session-events.ts';
import { eventStoreContract, user } from './store-contract.ts';
import { contents, jsonlStores } from './jsonl-fixture.ts';

const { tempDir, openStore } = jsonlStores('agentd-jsonl-');

const lines = async (path: string) => (await readFile(path, 'utf8')).split('\n');

eventStoreContract('jsonl', async () => {
  const dir = await tempDir();
  const { store, clock } = openStore(dir);
  return { store, clock, reopen: () => Promise.resolve(openStore(dir).store) };
});

describe('jsonl store: files', () => {
  it('create gives the session its file whole (written aside, then linked); a restart reads it; a leftover of a crash goes at open', async () => {
    const dir = await tempDir();
    const first = openStore(dir);
    const ts = '2024-05-01T00:00:00.000Z';
    const created = await first.store.create('made', [
      { seq: 1, ts, event: user('a') },
      { seq: 2, ts, event: user('b') },
    ]);
    expect(readdirSync(dir)).toEqual(['made.jsonl']); // nothing left beside it
    expect(
      (await readFile(join(dir, 'made.jsonl'), 'utf8'))
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual(created);
    await writeFile(join(dir, '.agentd-new-999-1'), '{"seq":1}\n'); // what a crash mid-create leaves
    expect((await first.store.list()).map((s) => s.id)).toEqual(['made']);
    const second = openStore(dir);
    await second.store.open();
    expect(readdirSync(dir)).toEqual(['.agentd-lock', 'made.jsonl']); // the leftover went; the lock names its holder
    expect(await second.store.read('made')).toEqual(created);
  });

  it('reopened, loads only the last lines of a long file, yet numbers on and reads all of it', async () => {
    const dir = await tempDir();
    const first = openStore(dir);
    const many = Array.from({ length: 300 }, (_, i) => user(`${i}`));
    await first.store.append('long', many);
    await first.store.close();
    const second = openStore(dir);
    expect((await second.store.append('long', [user('next')]))[0]?.seq).toBe(301);
    expect((await second.store.read('long', 290)).map((e) => e.seq)).toEqual(
      Array.from({ length: 11 }, (_, i) => 291 + i),
    );
    expect(await second.store.read('long')).toHaveLength(301);
    expect((await second.store.latest('long', ['userMessage']))?.seq).toBe(301);
  });

  it('creates the directory and writes one StoredEvent per line', async () => {
    const dir = join(await tempDir(), 'nested', 'sessions');
    const { store } = openStore(dir);
    const stored = await store.append('s1', [user('a'), user('b')]);
    const text = await readFile(join(dir, 's1.jsonl'), 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    expect(
      text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual(stored);
  });

  it('continues after a restart: list, read and seq see everything', async () => {
    const dir = await tempDir();
    const first = openStore(dir);
    await first.store.append('a', [user('1'), user('2')]);
    await first.store.append('b', [user('x')]);
    await first.store.close();

    const second = openStore(dir);
    expect(await second.store.list()).toEqual([
      { id: 'a', lastSeq: 2, updatedAt: '2025-01-02T03:04:05.678Z' },
      { id: 'b', lastSeq: 1, updatedAt: '2025-01-02T03:04:05.678Z' },
    ]);
    expect(contents(await second.store.read('a', 1))).toEqual(['2']);
    expect((await second.store.append('a', [user('3')]))[0]?.seq).toBe(3);
    expect(contents(await second.store.read('a'))).toEqual(['1', '2', '3']);
  });

  it('has a resolved append on disk without close (crash continuity)', async () => {
    const dir = await tempDir();
    await openStore(dir).store.append('s', [user('1')]);
    const other = openStore(dir);
    expect(contents(await other.store.read('s'))).toEqual(['1']);
  });

  it('close() flushes appends still in flight', async () => {
    const dir = await tempDir();
    const { store } = openStore(dir);
    const pending = Array.from({ length: 20 }, (_, i) => store.append('f', [user(String(i))]));
    await store.close();
    await Promise.all(pending);
    expect(await openStore(dir).store.read('f')).toHaveLength(20);
  });

  it('skips a torn last line with a warning and cuts it before the next append', async () => {
    const dir = await tempDir();
    await openStore(dir).store.append('t', [user('1'), user('2')]);
    const path = join(dir, 't.jsonl');
    await appendFile(path, '{"seq":3,"ts":"2025-01-02T03:04:05.678Z","sessionId":"t","event":{"type":"use');

    const { store, warnings } = openStore(dir);
    expect(contents(await store.read('t'))).toEqual(['1', '2']);
    expect(warnings()).toEqual([
      expect.objectContaining({ file: path, msg: expect.stringMatching(/torn/) as unknown }),
    ]);
    expect((await store.append('t', [user('3')]))[0]?.seq).toBe(3);
    const text = await lines(path);
    expect(text.at(-1)).toBe('');
    expect(text.slice(0, -1).map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual([1, 2, 3]);
  });

  it('treats a complete JSON object without its newline as torn too', async () => {
    const dir = await tempDir();
    await openStore(dir).store.append('t', [user('1')]);
    const path = join(dir, 't.jsonl');
    await appendFile(path, JSON.stringify({ seq: 2, ts: 'x', sessionId: 't', event: user('never acked') }));
    const { store, warnings } = openStore(dir);
    expect((await store.list())[0]?.lastSeq).toBe(1);
    expect(contents(await store.read('t'))).toEqual(['1']);
    expect(warnings()).toHaveLength(1);
    expect((await store.append('t', [user('2')]))[0]?.seq).toBe(2);
  });

  it('skips corrupt lines in the middle with a warning naming the file', async () => {
    const dir = await tempDir();
    await openStore(dir).store.append('m', [user('1'), user('2'), user('3')]);
    const path = join(dir, 'm.jsonl');
    const text = await lines(path);
    text[1] = '{"seq":2, this is not json';
    await writeFile(path, text.join('\n') + 'garbage line\n');

    const { store, warnings } = openStore(dir);
    expect(contents(await store.read('m'))).toEqual(['1', '3']);
    expect(warnings()).toEqual([expect.objectContaining({ file: path, count: 2, lines: [2, 4] })]);
    expect((await store.append('m', [user('4')]))[0]?.seq).toBe(4);
    expect((await store.list())[0]).toMatchObject({ id: 'm', lastSeq: 4 });
  });

  it('skips a well-formed line whose event fails the schema, with the same warning', async () => {
    const dir = await tempDir();
    await openStore(dir).store.append('v', [user('1')]);
    const bogus = {
      seq: 2,
      ts: '2025-01-02T03:04:05.678Z',
      sessionId: 'v',
      event: { v: 4, type: 'userMessage', turnId: 't', content: 42 },
    };
    const unknownType = {
      seq: 3,
      ts: '2025-01-02T03:04:05.678Z',
      sessionId: 'v',
      event: { v: 4, type: 'somethingElse' },
    };
    await appendFile(join(dir, 'v.jsonl'), `${JSON.stringify(bogus)}\n${JSON.stringify(unknownType)}\n`);
    const { store, warnings } = openStore(dir);
    expect(contents(await store.read('v'))).toEqual(['1']);
    expect(warnings()).toEqual([expect.objectContaining({ count: 2, lines: [2, 3] })]);
  });

  it('reads version-1 lines (no `v`) as the current version', async () => {
    const dir = await tempDir();
    const at = (seq: number, event: object) =>
      JSON.stringify({ seq, ts: '2025-01-02T03:04:05.678Z', sessionId: 'old', event });
    const old = [
      at(1, { type: 'userMessage', turnId: 't', content: 'hi' }),
      at(2, {
        type: 'assistantMessage',
        turnId: 't',
        content: '',
        final: false,
        model: 'm',
        toolCalls: [{ id: 'c', name: 'echo', arguments: '{}' }],
      }),
      at(3, {
        type: 'toolResult',
        turnId: 't',
        callId: 'c',
        toolName: 'echo',
        serverId: 's',
        success: true,
        result: 'ok',
        durationMs: 1,
      }),
      at(4, { type: 'assistantMessage', turnId: 't', content: 'done', final: true, model: 'm' }),
      at(5, { type: 'turnFailed', turnId: 'u', code: 'AGENT_ERROR', message: 'turn cancelled', cancelled: true }),
    ];
    await writeFile(join(dir, 'old.jsonl'), old.join('\n') + '\n');
    const events = (await openStore(dir).store.read('old')).map((e) => e.event);
    expect(events).toEqual([
      { v: 4, type: 'userMessage', turnId: 't', content: 'hi' },
      {
        v: 4,
        type: 'assistantStep',
        turnId: 't',
        text: '',
        model: 'm',
        toolCalls: [{ id: 'c', name: 'echo', arguments: '{}' }],
      },
      {
        v: 4,
        type: 'toolResult',
        turnId: 't',
        callId: 'c',
        toolName: 'echo',
        serverId: 's',
        success: true,
        result: 'ok',
        text: 'ok',
        durationMs: 1,
      },
      { v: 4, type: 'response', turnId: 't', content: 'done', text: 'done', model: 'm' },
      {
        v: 4,
        type: 'turnFailed',
        turnId: 'u',
        code: 'AGENT_ERROR',
        message: 'turn cancelled',
        details: { reason: 'cancelled' },
        cancelled: true,
      },
    ]);
  });

  it('lists a session whose last lines are corrupt by its last valid line', async () => {
    const dir = await tempDir();
    await openStore(dir).store.append('m', [user('1'), user('2')]);
    await appendFile(join(dir, 'm.jsonl'), 'not json\n{"partial');
    expect(await openStore(dir).store.list()).toMatchObject([{ id: 'm', lastSeq: 2 }]);
  });

  it('keeps order and consecutive seq for concurrent appends, in as few writes as it can', async () => {
    const dir = await tempDir();
    const { store } = openStore(dir);
    const handle = await open(join(dir, 'probe'), 'w');
    const proto = Object.getPrototypeOf(handle) as { write: (...args: unknown[]) => Promise<unknown> };
    await handle.close();
    const writes = vi.spyOn(proto, 'write'); // the journal's
    const fileWrites = vi.spyOn(fs, 'writeSync'); // the session file's
    try {
      const results = await Promise.all(Array.from({ length: 300 }, (_, i) => store.append('c', [user(String(i))])));
      expect(results.map((r) => r[0]?.seq)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
      expect(writes.mock.calls.length).toBeLessThanOrEqual(3);
      expect(fileWrites.mock.calls.length).toBeLessThanOrEqual(3);
    } finally {
      writes.mockRestore();
      fileWrites.mockRestore();
    }
    const onDisk = (await lines(join(dir, 'c.jsonl'))).slice(0, -1).map((l) => JSON.parse(l) as { seq: number });
    expect(onDisk.map((e) => e.seq)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
  });

  it('serves many more sessions than the handle and cache caps', async () => {
    const dir = await tempDir();
    const fdsBefore = existsSync('/proc/self/fd') ? readdirSync('/proc/self/fd').length : undefined;
    const { store } = openStore(dir, { maxOpenFiles: 4, maxCachedSessions: 8 });
    const ids = Array.from({ length: 60 }, (_, i) => `s${i}`);
    let peak = 0;
    const sampler = setInterval(() => {
      if (fdsBefore !== undefined) peak = Math.max(peak, readdirSync('/proc/self/fd').length - fdsBefore);
    }, 0);
    try {
      for (let round = 1; round <= 3; round++) {
        await Promise.all(ids.map((id) => store.append(id, [user(`${id}-${round}`)])));
      }
    } finally {
      clearInterval(sampler);
    }
    // at most 4 handles for appending, plus 16 files being loaded (the cache holds only 8 sessions)
    expect(peak).toBeLessThanOrEqual(4 + 16);
    if (fdsBefore !== undefined) expect(readdirSync('/proc/self/fd').length - fdsBefore).toBeLessThanOrEqual(4);
    for (const id of ids) expect(contents(await store.read(id))).toEqual([1, 2, 3].map((r) => `${id}-${r}`));
    expect((await store.list()).map((s) => s.lastSeq)).toEqual(ids.map(() => 3));
  });

  it('a new session reads as empty before its first append without making a file, then as what was appended', async () => {
    const dir = await tempDir();
    const { store } = openStore(dir);
    await store.append('other', [user('x')]);
    expect(await store.read('new')).toEqual([]);
    expect(await store.latest('new', ['user_message'])).toBeUndefined();
    expect(await store.turns('new')).toEqual([]);
    expect(await store.has('new')).toBe(false);
    expect((await store.list()).map((s) => s.id)).toEqual(['other']);
    expect(readdirSync(dir).filter((f) => f.endsWith('.jsonl'))).toEqual(['other.jsonl']);
    const [stored] = await store.append('new', [user('a')]);
    expect(stored?.seq).toBe(1);
    expect(contents(await store.read('new'))).toEqual(['a']);
    expect(await store.has('new')).toBe(true);
    expect((await store.list()).map((s) => s.id).sort()).toEqual(['new', 'other']);
  });

  it('delete() removes the file', async () => {
    const dir = await tempDir();
    const { store } = openStore(dir);
    await store.append('gone', [user('1')]);
    expect(existsSync(join(dir, 'gone.jsonl'))).toBe(true);
    expect(await store.delete('gone')).toBe(true);
    expect(existsSync(join(dir, 'gone.jsonl'))).toBe(false);
  });

  it('maps hostile and unicode ids to flat, safe file names that round-trip through list()', async () => {
    const dir = await tempDir();
    const ids = [
      '../../etc/passwd',
      'a/b',
      '.',
      '..',
      '.hidden',
      '\u0000alice\u0000y',
      'CON',
      'Con',
      'con',
      'ü/日本/🎉',
      'x'.repeat(128),
      '日'.repeat(128),
    ];
    const first = openStore(dir);
    for (const id of ids) await first.store.append(id, [user(id)]);
    await first.store.close();
    const names = await readdir(dir);
    expect(names).toHaveLength(ids.length);
    for (const name of names) expect(name).toMatch(/^[a-z0-9_%~A-F-]{1,250}\.jsonl$/);
    const second = openStore(dir);
    expect((await second.store.list()).map((s) => s.id).sort()).toEqual([...ids].sort());
    for (const id of ids) expect(contents(await second.store.read(id))).toEqual([id]);
  });

  it('a page reads only the files it answers, and a file with no valid event takes no room in it', async () => {
    const dir = await tempDir();
    const { store } = openStore(dir);
    for (const id of ['a', 'c', 'd', 'e']) await store.append(id, [user(id)]);
    await writeFile(join(dir, fileNameOf('b')), 'not json\n{"torn'); // a session file without a valid event
    const long = sessionKey('z'.repeat(130), 'z'.repeat(120)); // its file name keeps only the start of its key
    await store.append(long, [user('long')]);
    // Files that fail when read (directories): a listing that read them would fail.
    await mkdir(join(dir, fileNameOf('x')));
    await mkdir(join(dir, fileNameOf('zy' + 'y'.repeat(250))));
    const reopened = openStore(dir);
    expect((await reopened.store.list({ limit: 2 })).map((s) => s.id)).toEqual([long, 'a']);
    expect((await reopened.store.list({ after: 'a', limit: 2 })).map((s) => s.id)).toEqual(['c', 'd']);
    expect((await reopened.store.list({ after: 'd', below: 'w' })).map((s) => s.id)).toEqual(['e']);
    expect((await reopened.store.list({ from: '\u0000' + 'z'.repeat(100), below: '\u0001' })).map((s) => s.id)).toEqual(
      [long],
    );
    await expect(reopened.store.list()).rejects.toMatchObject({ code: 'INTERNAL_ERROR' });
  });

  it('ignores files it did not write', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'README'), 'hello\n');
    await writeFile(join(dir, 'Upper.jsonl'), '{}\n');
    await writeFile(join(dir, '%61.jsonl'), '{}\n');
    expect(await openStore(dir).store.list()).toEqual([]);
  });

  it('keeps its identity in .agentd-store-id beside the logs (listing ignores it); a file that holds none is replaced with a warning', async () => {
    const dir = await tempDir();
    const { store } = openStore(dir);
    await store.append('s', [user('1')]);
    const id = await store.storeId();
    // nothing left of its writing but the journal that holds the append until a checkpoint
    expect(readdirSync(dir).sort()).toEqual(['.agentd-journal-1', '.agentd-store-id', 's.jsonl']);
    expect((await readFile(join(dir, '.agentd-store-id'), 'utf8')).trim()).toBe(id);
    expect((await store.list()).map((s) => s.id)).toEqual(['s']);
    await writeFile(join(dir, '.agentd-store-id'), '\n');
    const garbled = openStore(dir);
    const replaced = await garbled.store.storeId();
    expect(replaced).not.toBe(id);
    expect(garbled.warnings().map((w) => w.msg)).toEqual([
      'event store: the store id file holds no id; a new one replaces it',
    ]);
    expect(await openStore(dir).store.storeId()).toBe(replaced);
  });

  it('rejects an append whose write fails, keeps nothing of it, and recovers', async () => {
    const dir = await tempDir();
    const { store } = openStore(dir);
    await store.append('w', [user('1')]);
    await store.close();
    const again = openStore(dir).store;
    await mkdir(join(dir, fileNameOf('blocked')));
    await expect(again.append('blocked', [user('x')])).rejects.toMatchObject({ code: 'INTERNAL_ERROR' });
    await rmdir(join(dir, fileNameOf('blocked')));
    expect((await again.append('blocked', [user('y')]))[0]?.seq).toBe(1);
  });

  it('cuts back a batch whose write fails midway, so a restart never sees it', async () => {
    const dir = await tempDir();
    const { store } = openStore(dir);
    await store.append('w', [user('1')]);
    const real = fs.writeSync;
    const writes = vi.spyOn(fs, 'writeSync').mockImplementationOnce((...args: Parameters<typeof fs.writeSync>) => {
      real(...args); // the bytes land, then the write "fails"
      throw Object.assign(new Error('disk full'), { code: 'ENOSPC' });
    });
    await expect(store.append('w', [user('2'), user('3')])).rejects.toMatchObject({
      code: 'INTERNAL_ERROR',
      details: { cause: 'ENOSPC' },
    });
    writes.mockRestore();
    expect((await store.append('w', [user('2 again')]))[0]?.seq).toBe(2);
    expect(contents(await openStore(dir).store.read('w'))).toEqual(['1', '2 again']);
  });

  it('counts the turns of files written before totals were kept once, at the first total after a start (without saved turn indexes: from the logs), then keeps them with every write past the index cache', async () => {
    const dir = await tempDir();
    const first = openStore(dir);
    const alice = (id: string) => sessionKey('alice', id);
    for (let i = 0; i < 10; i++) await first.store.append(alice(`s${i}`), [user('q', 't1'), user('r', 't2')]);
    await first.store.append('plain', [user('q', 't1')]);
    await first.store.close();
    await rm(join(dir, '.agentd-turns'), { recursive: true, force: true }); // as an agentd without saved indexes left it
    // One turn index in memory at a time (each weighs 3): the appends below load and drop them, the totals are kept all the same.
    const second = openStore(dir, { maxIndexedTurns: 4, maxCachedSessions: 2 });
    await second.store.open();
    expect(await Promise.all([second.store.turnTotal(), second.store.turnTotal('alice')])).toEqual([21, 20]);
    for (let i = 0; i < 10; i++)
      await second.store.append(alice(`s${i}`), [user('n', `t${3 + (i % 2)}`), user('o', 't1')]);
    await second.store.delete('plain');
    expect(
      await Promise.all([second.store.turnTotal(), second.store.turnTotal('alice'), second.store.turnTotal('')]),
    ).toEqual([30, 30, 0]);
    await second.store.close();
    expect(await readdir(join(dir, '.agentd-turns'))).toHaveLength(10); // the indexes the appends loaded, saved as they left
    const third = openStore(dir);
    expect(await third.store.turnTotal('alice')).toBe(30);
  });

  it('is what createStore builds for { type: "jsonl" }', async () => {
    const dir = await tempDir();
    const store = createStore(
      { type: 'jsonl', dir },
      { log: pino({ level: 'silent' }), parseEvent: parseSessionEvent },
    );
    try {
      await store.append('s', [user('1')]);
      expect(existsSync(join(dir, 's.jsonl'))).toBe(true);
    } finally {
      await store.close();
    }
  });
});

describe('jsonl store memory bound', () => {
  it('keeps only a window of recent events in memory and reads older ones from the file', async () => {
    const dir = await tempDir();
    const { store } = openStore(dir, { maxCachedEvents: 3 });
    for (let i = 1; i <= 20; i++) await store.append('long', [user(`m${i}`)]);
    expect(contents(await store.read('long', 17))).toEqual(['m18', 'm19', 'm20']);
    const all = await store.read('long');
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(contents(await store.read('long', 5)).slice(0, 2)).toEqual(['m6', 'm7']);
    expect((await store.list()).find((s) => s.id === 'long')?.lastSeq).toBe(20);
    const [next] = await store.append('long', [user('m21')]);
    expect(next?.seq).toBe(21);
    const reopened = openStore(dir, { maxCachedEvents: 3 }).store;
    expect((await reopened.read('long')).map((e) => e.seq).at(-1)).toBe(21);
  });

  it('keeps the window under maxCachedBytes (characters of JSON), always with the newest event', async () => {
    const dir = await tempDir();
    const { store } = openStore(dir, { maxCachedBytes: 3000 });
    const big = (i: number) => `m${i} ${'x'.repeat(1000)}`;
    for (let i = 1; i <= 10; i++) await store.append('big', [user(big(i))]);
    // Change the file behind the store's back (same length): reads served from memory still see 'x'.
    const file = join(dir, 'big.jsonl');
    await writeFile(file, (await readFile(file, 'utf8')).replaceAll('x', 'y'));
    const changed = (i: number) => `m${i} ${'y'.repeat(1000)}`;
    expect(contents(await store.read('big', 8))).toEqual([big(9), big(10)]); // two events fit in 3000 characters
    expect(contents(await store.read('big', 7))).toEqual([changed(8), changed(9), changed(10)]); // older: from the file
    const tiny = openStore(dir, { maxCachedBytes: 10 }).store;
    await tiny.append('one', [user(big(1))]);
    await tiny.append('one', [user(big(2))]);
    const other = join(dir, 'one.jsonl');
    await writeFile(other, (await readFile(other, 'utf8')).replaceAll('x', 'y'));
    expect(contents(await tiny.read('one', 1))).toEqual([big(2)]); // the newest event stays, whatever its size
    expect(contents(await tiny.read('one', 0))).toEqual([changed(1), changed(2)]);
    expect((await tiny.append('one', [user('3')]))[0]?.seq).toBe(3);
  });

  it('answers an old read after appends queued before it', async () => {
    const dir = await tempDir();
    const { store } = openStore(dir, { maxCachedEvents: 2 });
    const appends = Array.from({ length: 10 }, (_, i) => store.append('q', [user(`q${i}`)]));
    const read = store.read('q', 0);
    await Promise.all(appends);
    expect(contents(await read)).toEqual(Array.from({ length: 10 }, (_, i) => `q${i}`));
  });
});
