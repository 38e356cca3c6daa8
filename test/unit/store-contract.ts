import { afterEach, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/conversation/session-events.ts';
import type { Clock } from '../../src/clock.ts';
import type { EventStore } from '../../src/store/types.ts';
import { namespacePrefix, sessionKey } from '../../src/session-id.ts';
import { compareKeys } from '../../src/store/index.ts';
import { recencyContract } from './store-recency-contract.ts';
import { turnTotalsContract } from './store-turn-totals-contract.ts';

/** A clock the test moves by hand. */
export function manualClock(start = Date.UTC(2025, 0, 2, 3, 4, 5, 678)): Clock & { advance(ms: number): void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

export const user = (content: string, turnId = 't1'): SessionEvent => ({ v: 4, type: 'userMessage', turnId, content });
const queued = (turnId: string): SessionEvent => ({
  v: 4,
  type: 'messageQueued',
  turnId,
  correlationId: `c-${turnId}`,
  content: 'later',
});

/** Events of every kind, with every optional field, to check that they round-trip unchanged. */
export const sampleEvents: SessionEvent[] = [
  {
    v: 4,
    type: 'userMessage',
    turnId: 't1',
    content: 'hi ✓',
    image: { mimeType: 'image/png', base64: 'iVBORw0KGgo=' },
  },
  {
    v: 4,
    type: 'reasoning',
    turnId: 't1',
    model: 'm',
    api: 'messages',
    text: 'Echo it.',
    replay: [{ type: 'thinking', thinking: 'Echo it.', signature: 'c2ln' }],
  },
  {
    v: 4,
    type: 'assistantStep',
    turnId: 't1',
    text: '',
    model: 'm',
    toolCalls: [{ id: 'c1', name: 'echo', arguments: '{"x":1}' }],
    usage: { promptTokens: 1, completionTokens: 2, totalTokens: 3 },
  },
  {
    v: 4,
    type: 'toolCall',
    turnId: 't1',
    callId: 'c1',
    toolName: 'echo',
    serverId: 's',
    args: { x: 1, nested: [null, 'a'] },
  },
  {
    v: 4,
    type: 'toolResult',
    turnId: 't1',
    callId: 'c1',
    toolName: 'echo',
    serverId: 's',
    success: true,
    result: { content: [{ type: 'text', text: '1' }] },
    text: '1',
    durationMs: 5,
    app: {
      resourceUri: 'ui://echo/view.html',
      mimeType: 'text/html;profile=mcp-app',
      html: '<!doctype html><p>1</p>',
      ui: { csp: { connectDomains: ['https://api.example.com'] }, prefersBorder: true },
    },
  },
  { v: 4, type: 'response', turnId: 't1', content: 'done', text: 'done', model: 'm' },
  {
    v: 4,
    type: 'turnFailed',
    turnId: 't2',
    code: 'AGENT_ERROR',
    message: 'x',
    details: { reason: 'cancelled' },
    cancelled: true,
  },
  {
    v: 4,
    type: 'contextCompacted',
    method: 'summary',
    trigger: 'overflow',
    upToSeq: 4,
    readFrom: 5,
    summary: 'The user asked to add; the tool said 1.',
    tokensBefore: 7000,
    tokensAfter: 900,
    turnId: 't2',
    model: 'm',
    usage: { promptTokens: 600, completionTokens: 40, totalTokens: 640 },
    usageTotal: { promptTokens: 601, completionTokens: 42, totalTokens: 643 },
  },
  { v: 4, type: 'reset' },
  { v: 4, type: 'turnResumed', turnId: 't3', attempt: 1, reply: 'Looking.' },
];

export interface ContractSubject {
  store: EventStore<SessionEvent>;
  clock: ReturnType<typeof manualClock>;
  /** Another store over the same medium (engines that have one: a directory, a Redis key prefix). */
  reopen?: () => Promise<EventStore<SessionEvent>>;
}

/** The EventStore port's contract; every engine runs it with its own factory. */
export function eventStoreContract(name: string, make: () => Promise<ContractSubject>): void {
  describe(`EventStore contract: ${name}`, () => {
    const opened: EventStore<SessionEvent>[] = [];
    const subject = async () => {
      const s = await make();
      opened.push(s.store);
      return s;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });

    recencyContract(subject, opened);
    turnTotalsContract(subject, opened);

    it('marks the sessions with a turn open, in call order, for another store over the medium (engines that keep them)', async () => {
      const { store, reopen } = await subject();
      if (!store.markOpenTurn || !store.openTurnSessions) return; // the memory engine: nothing outlives it
      const long = '\u0000alice\u0000chat 1'; // an owned key (not a plain file name)
      await Promise.all([store.markOpenTurn('a', true), store.markOpenTurn(long, true), store.markOpenTurn('b', true)]);
      void store.markOpenTurn('b', false);
      await store.markOpenTurn('a', false);
      await store.markOpenTurn('a', true);
      await store.markOpenTurn('b', false);
      const later = reopen ? await reopen() : store;
      if (later !== store) opened.push(later);
      expect((await later.openTurnSessions!()).sort()).toEqual([long, 'a']);
    });

    it('numbers appends per session from 1 and stamps them with the clock', async () => {
      const { store, clock } = await subject();
      const first = await store.append('a', [user('1'), user('2')]);
      clock.advance(1000);
      const second = await store.append('a', [user('3')]);
      const other = await store.append('b', [user('x')]);
      expect(first.map((e) => e.seq)).toEqual([1, 2]);
      expect(second).toEqual([{ seq: 3, ts: '2025-01-02T03:04:06.678Z', sessionId: 'a', event: user('3') }]);
      expect(first[0]?.ts).toBe('2025-01-02T03:04:05.678Z');
      expect(other[0]?.seq).toBe(1);
    });

    it('reads in order, from after `since`; an unknown session reads as empty', async () => {
      const { store } = await subject();
      await store.append('a', [user('1'), user('2'), user('3')]);
      expect((await store.read('a')).map((e) => e.seq)).toEqual([1, 2, 3]);
      expect((await store.read('a', 2)).map((e) => e.event)).toEqual([user('3')]);
      expect(await store.read('a', 3)).toEqual([]);
      expect(await store.read('a', 99)).toEqual([]);
      expect(await store.read('nobody')).toEqual([]);
    });

    it('round-trips every kind of event unchanged', async () => {
      const { store } = await subject();
      const stored = await store.append('s', sampleEvents);
      expect(stored.map((e) => e.event)).toEqual(sampleEvents);
      expect((await store.read('s')).map((e) => e.event)).toEqual(sampleEvents);
    });

    it('hands out frozen copies: neither the caller nor a reader can change the log', async () => {
      const { store } = await subject();
      const event = { v: 4, type: 'userMessage', turnId: 't', content: 'before' } as {
        v: 4;
        type: 'userMessage';
        turnId: string;
        content: string;
      };
      const [stored] = await store.append('s', [event]);
      event.content = 'after';
      expect(Object.isFrozen(stored?.event)).toBe(true);
      expect(() => {
        (stored as { seq: number }).seq = 7;
      }).toThrow(TypeError);
      expect((await store.read('s'))[0]?.event).toEqual(user('before', 't'));
    });

    it('keeps call order and consecutive seq under concurrent appends', async () => {
      const { store } = await subject();
      const results = await Promise.all(
        Array.from({ length: 100 }, (_, i) => store.append('c', [user(`${i}a`), user(`${i}b`)])),
      );
      expect(results.flat().map((e) => e.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
      const read = await store.read('c');
      expect(read.map((e) => (e.event as { content: string }).content)).toEqual(
        Array.from({ length: 100 }, (_, i) => [`${i}a`, `${i}b`]).flat(),
      );
    });

    it('an empty append resolves to nothing and creates no session', async () => {
      const { store } = await subject();
      expect(await store.append('empty', [])).toEqual([]);
      expect(await store.list()).toEqual([]);
    });

    it('lists sessions with their last seq and time, sorted by id', async () => {
      const { store, clock } = await subject();
      await store.append('zeta', [user('1')]);
      clock.advance(60_000);
      await store.append('alpha', [user('1'), user('2')]);
      expect(await store.list()).toEqual([
        { id: 'alpha', lastSeq: 2, updatedAt: '2025-01-02T03:05:05.678Z' },
        { id: 'zeta', lastSeq: 1, updatedAt: '2025-01-02T03:04:05.678Z' },
      ]);
    });

    it("lists by key in code point order (the order of the keys' UTF-8 bytes), owned keys first", async () => {
      const { store } = await subject();
      // U+FFFD sorts before U+1F389 by code point, after it by UTF-16 code unit.
      const keys = ['b', '\uFFFD', '🎉', 'Z', 'a', sessionKey('alice', 'x'), 'a\uFFFD', 'a🎉'];
      for (const key of keys) await store.append(key, [user(key)]);
      expect((await store.list()).map((s) => s.id)).toEqual([
        sessionKey('alice', 'x'),
        'Z',
        'a',
        'a\uFFFD',
        'a🎉',
        'b',
        '\uFFFD',
        '🎉',
      ]);
    });

    it('lists a range: after (exclusive), from (inclusive), below (exclusive) and at most limit, in key order', async () => {
      const { store, clock } = await subject();
      const keys = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
      for (const key of keys) {
        await store.append(key, [user(key)]);
        clock.advance(1000);
      }
      const ids = async (range: Parameters<typeof store.list>[0]) => (await store.list(range)).map((s) => s.id);
      expect(await ids({ after: 'c', limit: 3 })).toEqual(['d', 'e', 'f']);
      expect(await ids({ after: 'c' })).toEqual(['d', 'e', 'f', 'g']);
      expect(await ids({ after: 'cc', limit: 1 })).toEqual(['d']); // a key no session has
      expect(await ids({ from: 'c', below: 'f' })).toEqual(['c', 'd', 'e']);
      expect(await ids({ from: 'b', after: 'd', limit: 2 })).toEqual(['e', 'f']); // the tighter lower bound
      expect(await ids({ from: 'e', after: 'b' })).toEqual(['e', 'f', 'g']);
      expect(await ids({ limit: 2 })).toEqual(['a', 'b']);
      expect(await ids({ after: 'g' })).toEqual([]);
      expect(await ids({ from: 'd', below: 'd' })).toEqual([]);
      expect(await store.list({ from: 'b', limit: 1 })).toEqual([
        { id: 'b', lastSeq: 1, updatedAt: '2025-01-02T03:04:06.678Z' },
      ]);
    });

    it("lists the range of one owner's keys, long ones included", async () => {
      const { store } = await subject();
      const owner = 'jwt:' + 'o'.repeat(127);
      const mine = [sessionKey(owner, 'x'.repeat(128)), sessionKey(owner, 'a'), sessionKey(owner, 'Ω'.repeat(100))];
      const others = [
        'plain',
        sessionKey(owner + 'o', 'a'),
        sessionKey('jwt:' + 'o'.repeat(126), 'y'.repeat(128)),
        sessionKey('alice', 'b'),
      ];
      for (const key of [...mine, ...others]) await store.append(key, [user('hi')]);
      const prefix = namespacePrefix(owner);
      const range = { from: prefix, below: prefix.slice(0, -1) + '\u0001' };
      expect((await store.list(range)).map((s) => s.id)).toEqual([...mine].sort(compareKeys));
      expect((await store.list({ ...range, limit: 1 })).map((s) => s.id)).toEqual([sessionKey(owner, 'a')]);
      // Keys without an owner: from U+0001 on.
      expect((await store.list({ from: '\u0001' })).map((s) => s.id)).toEqual(['plain']);
    });

    it('pages through every session once, whatever is created or deleted between pages', async () => {
      const { store } = await subject();
      const keys = Array.from({ length: 10 }, (_, i) => `s${i}`);
      for (const key of keys) await store.append(key, [user(key)]);
      const seen: string[] = [];
      let after: string | undefined;
      for (let page = 0; ; page++) {
        const got = (await store.list({ ...(after !== undefined && { after }), limit: 3 })).map((s) => s.id);
        seen.push(...got);
        if (got.length < 3) break;
        after = got.at(-1);
        if (page === 0) {
          await store.delete('s1'); // listed already
          await store.delete('s5'); // not listed yet
          await store.append('a-new', [user('before the cursor')]);
          await store.append('s4b', [user('after the cursor')]);
        }
      }
      expect(seen).toEqual(['s0', 's1', 's2', 's3', 's4', 's4b', 's6', 's7', 's8', 's9']);
    });

    it('deletes a stream: true once, then false; a new stream starts again at seq 1', async () => {
      const { store } = await subject();
      await store.append('d', [user('1'), user('2')]);
      await store.append('keep', [user('1')]);
      expect(await store.delete('d')).toBe(true);
      expect(await store.delete('d')).toBe(false);
      expect(await store.delete('never')).toBe(false);
      expect(await store.read('d')).toEqual([]);
      expect((await store.list()).map((s) => s.id)).toEqual(['keep']);
      expect((await store.append('d', [user('again')]))[0]?.seq).toBe(1);
    });

    it('applies a delete between appends in call order', async () => {
      const { store } = await subject();
      const [a, deleted, b] = await Promise.all([
        store.append('o', [user('old')]),
        store.delete('o'),
        store.append('o', [user('new')]),
      ]);
      expect(a[0]?.seq).toBe(1);
      expect(deleted).toBe(true);
      expect(b[0]?.seq).toBe(1);
      expect((await store.read('o')).map((e) => e.event)).toEqual([user('new')]);
    });

    it('a delete called while an append is in flight removes what that append wrote (call order, whatever is in flight)', async () => {
      const { store } = await subject();
      await store.append('f', [user('1')]);
      const inFlight = store.append('f', [user('2'), user('3')]);
      const deleted = store.delete('f');
      expect((await inFlight).map((e) => e.seq)).toEqual([2, 3]);
      expect(await deleted).toBe(true);
      expect(await store.read('f')).toEqual([]);
      expect((await store.list()).map((s) => s.id)).not.toContain('f');
    });

    it('tells whether a session has stored events, without reading its log', async () => {
      const { store } = await subject();
      await store.append('here', [user('1')]);
      await store.append('empty', []);
      expect(await store.has('here')).toBe(true);
      expect(await store.has('empty')).toBe(false);
      expect(await store.has('never')).toBe(false);
      await store.delete('here');
      expect(await store.has('here')).toBe(false);
    });

    it('accepts any key of the rule of keys (ids of 1–128 units and owned keys, well-formed), and refuses others', async () => {
      const { store } = await subject();
      const owned = sessionKey('jwt:' + 'o'.repeat(128), 'x'.repeat(128));
      const ids = [
        '../up',
        'a/b\\c',
        '.',
        '..',
        'Ünïcødé 日本 🎉',
        'Case',
        'case',
        'x'.repeat(128),
        '🎉'.repeat(64),
        sessionKey('alice', 'default'),
        owned,
      ];
      for (const id of ids) await store.append(id, [user(id)]);
      for (const id of ids) expect((await store.read(id))[0]?.event).toEqual(user(id));
      expect((await store.list()).map((s) => s.id).sort()).toEqual([...ids].sort());
      await expect(store.append('', [user('x')])).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
      await expect(store.append(owned + 'x', [user('x')])).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
      await expect(store.read('bad\uD800')).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    });

    it('rejects an event JSON cannot carry without using up a seq', async () => {
      const { store } = await subject();
      const bad: SessionEvent = {
        v: 4,
        type: 'toolCall',
        turnId: 't',
        callId: 'c',
        toolName: 'n',
        serverId: 's',
        args: 1n,
      };
      await expect(store.append('j', [bad])).rejects.toMatchObject({ code: 'INTERNAL_ERROR' });
      expect((await store.append('j', [user('ok')]))[0]?.seq).toBe(1);
    });

    it('create writes a whole log with its own seqs and times; appends continue after it', async () => {
      const { store } = await subject();
      const log = sampleEvents.map((event, i) => ({
        seq: i + 1,
        ts: `2024-05-0${1 + (i % 3)}T00:00:0${i}.000Z`,
        event,
      }));
      const created = await store.create('copy', log);
      expect(created).toEqual(log.map((e) => ({ ...e, sessionId: 'copy' })));
      expect(Object.isFrozen(created[0]?.event)).toBe(true);
      expect(await store.read('copy')).toEqual(created);
      expect(await store.read('copy', 5)).toEqual(created.slice(5));
      const last = log.at(-1)!;
      expect(await store.list()).toEqual([{ id: 'copy', lastSeq: last.seq, updatedAt: last.ts }]);
      expect((await store.append('copy', [user('next')]))[0]?.seq).toBe(log.length + 1);
    });

    it('create keeps a gap in the seqs as a gap', async () => {
      const { store } = await subject();
      const ts = '2024-05-01T00:00:00.000Z';
      await store.create('gap', [
        { seq: 1, ts, event: user('1') },
        { seq: 3, ts, event: user('3') },
      ]);
      expect((await store.read('gap')).map((e) => e.seq)).toEqual([1, 3]);
      expect((await store.read('gap', 1)).map((e) => e.seq)).toEqual([3]);
      expect((await store.append('gap', [user('4')]))[0]?.seq).toBe(4);
    });

    it('create never writes into a session that has a log, nor half of a log', async () => {
      const { store } = await subject();
      const ts = '2024-05-01T00:00:00.000Z';
      await store.append('taken', [user('mine')]);
      await expect(store.create('taken', [{ seq: 1, ts, event: user('theirs') }])).rejects.toMatchObject({
        code: 'INTERNAL_ERROR',
        details: { reason: 'exists' },
      });
      expect((await store.read('taken')).map((e) => e.event)).toEqual([user('mine')]);
      // Seqs that do not ascend, or an event JSON cannot carry: refused before anything is written.
      await expect(
        store.create('bad', [
          { seq: 2, ts, event: user('a') },
          { seq: 2, ts, event: user('b') },
        ]),
      ).rejects.toMatchObject({ code: 'INTERNAL_ERROR' });
      const big: SessionEvent = {
        v: 4,
        type: 'toolCall',
        turnId: 't',
        callId: 'c',
        toolName: 'n',
        serverId: 's',
        args: 1n,
      };
      await expect(
        store.create('bad', [
          { seq: 1, ts, event: user('a') },
          { seq: 2, ts, event: big },
        ]),
      ).rejects.toMatchObject({ code: 'INTERNAL_ERROR' });
      expect(await store.read('bad')).toEqual([]);
      expect((await store.list()).map((s) => s.id)).toEqual(['taken']);
      expect(await store.create('none', [])).toEqual([]);
      expect((await store.list()).map((s) => s.id)).toEqual(['taken']);
    });

    it("create is ordered with the session's other calls: after an append it is refused, after a delete it writes", async () => {
      const { store } = await subject();
      const ts = '2024-05-01T00:00:00.000Z';
      const [, refused] = await Promise.allSettled([
        store.append('race', [user('first')]),
        store.create('race', [{ seq: 1, ts, event: user('copy') }]),
      ]);
      expect(refused).toMatchObject({ status: 'rejected', reason: { details: { reason: 'exists' } } });
      const [, , created] = await Promise.all([
        store.delete('race'),
        store.read('race'),
        store.create('race', [{ seq: 1, ts, event: user('copy') }]),
      ]);
      expect(created.map((e) => e.event)).toEqual([user('copy')]);
      expect((await store.read('race')).map((e) => e.event)).toEqual([user('copy')]);
    });

    it('create keeps the latest event of each type findable', async () => {
      const { store } = await subject();
      const ts = '2024-05-01T00:00:00.000Z';
      await store.create('made', [
        { seq: 1, ts, event: user('a') },
        { seq: 2, ts, event: { v: 4, type: 'reset' } },
        { seq: 3, ts, event: user('b') },
      ]);
      expect((await store.latest('made', ['reset']))?.seq).toBe(2);
      expect((await store.latest('made', ['userMessage']))?.seq).toBe(3);
    });

    it('finds the latest event of some types without the caller reading the log', async () => {
      const { store } = await subject();
      const mark = (n: number): SessionEvent => ({
        v: 4,
        type: 'contextCompacted',
        method: 'summary',
        trigger: 'manual',
        upToSeq: n,
        readFrom: n + 1,
        summary: `s${n}`,
        tokensBefore: 10,
        tokensAfter: 1,
        usageTotal: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      });
      expect(await store.latest('m', ['contextCompacted'])).toBeUndefined();
      // Longer than any engine's in-memory window, with marks early and in the middle.
      const events = Array.from({ length: 400 }, (_, i) => (i === 10 || i === 200 ? mark(i) : user(`${i}`)));
      for (let i = 0; i < events.length; i += 50) await store.append('m', events.slice(i, i + 50));
      const found = await store.latest('m', ['contextCompacted', 'reset']);
      expect(found).toMatchObject({ seq: 201, sessionId: 'm', event: mark(200) });
      expect(await store.latest('m', ['reset'])).toBeUndefined();
      expect((await store.latest('m', ['userMessage']))?.seq).toBe(400);
      // Reading from its readFrom on gives everything after it, in order.
      const since = await store.read('m', 200);
      expect(since.map((e) => e.seq)).toEqual(Array.from({ length: 200 }, (_, i) => 201 + i));
      expect(await store.latest('nobody', ['contextCompacted'])).toBeUndefined();
      await store.delete('m');
      expect(await store.latest('m', ['contextCompacted'])).toBeUndefined();
    });

    it('indexes turns: each one from its first event to its last, in the order they began, paged by first seq', async () => {
      const { store } = await subject();
      await store.append('s', [
        user('one', 't1'),
        { v: 4, type: 'toolCall', turnId: 't1', callId: 'c', toolName: 'x', serverId: 'y', args: {} },
      ]);
      await store.append('s', [
        queued('t2'),
        { v: 4, type: 'response', turnId: 't1', content: 'ok', text: 'ok', model: 'm' },
      ]);
      await store.append('s', [
        { v: 4, type: 'reset' },
        user('two', 't2'),
        { v: 4, type: 'response', turnId: 't2', content: 'ok', text: 'ok', model: 'm' },
      ]);
      await store.append('other', [user('x', 't9')]);
      const all = [
        { turnId: 't1', firstSeq: 1, lastSeq: 4 },
        { turnId: 't2', firstSeq: 3, lastSeq: 7 },
      ];
      expect(await store.turns('s')).toEqual(all);
      expect(await store.turns('s', { after: 1 })).toEqual(all.slice(1));
      expect(await store.turns('s', { limit: 1 })).toEqual(all.slice(0, 1));
      expect(await store.turns('s', { after: 3 })).toEqual([]);
      expect(await store.turns('nobody')).toEqual([]);
    });

    it("reads one turn's events after `since`, none of another turn's", async () => {
      const { store } = await subject();
      await store.append('s', [
        user('one', 't1'),
        queued('t2'),
        { v: 4, type: 'response', turnId: 't1', content: 'ok', text: 'ok', model: 'm' },
      ]);
      await store.append('s', [
        user('two', 't2'),
        { v: 4, type: 'reset' },
        { v: 4, type: 'response', turnId: 't2', content: 'ok', text: 'ok', model: 'm' },
      ]);
      expect((await store.readTurn('s', 't2')).map((e) => [e.seq, e.event.type])).toEqual([
        [2, 'messageQueued'],
        [4, 'userMessage'],
        [6, 'response'],
      ]);
      expect((await store.readTurn('s', 't2', 2)).map((e) => e.seq)).toEqual([4, 6]);
      expect((await store.readTurn('s', 't1')).map((e) => e.seq)).toEqual([1, 3]);
      expect(await store.readTurn('s', 't3')).toEqual([]);
      expect(await store.readTurn('nobody', 't1')).toEqual([]);
      const [stored] = await store.readTurn('s', 't1');
      expect(stored).toMatchObject({ seq: 1, sessionId: 's', event: user('one', 't1') });
      expect(Object.isFrozen(stored?.event)).toBe(true);
    });

    it('finds an early turn of a long log, beyond any in-memory window', async () => {
      const { store } = await subject();
      const events = Array.from({ length: 400 }, (_, i) => user(`${i}`, `t${Math.floor(i / 4)}`));
      for (let i = 0; i < events.length; i += 50) await store.append('long', events.slice(i, i + 50));
      expect((await store.readTurn('long', 't2')).map((e) => e.seq)).toEqual([9, 10, 11, 12]);
      expect(await store.turns('long', { after: 8, limit: 2 })).toEqual([
        { turnId: 't2', firstSeq: 9, lastSeq: 12 },
        { turnId: 't3', firstSeq: 13, lastSeq: 16 },
      ]);
      expect((await store.turns('long')).length).toBe(100);
    });

    it('create indexes the turns of the log it writes; a delete forgets them', async () => {
      const { store } = await subject();
      const ts = '2024-05-01T00:00:00.000Z';
      await store.create('made', [
        { seq: 2, ts, event: user('a', 'ta') },
        { seq: 5, ts, event: user('b', 'tb') },
        { seq: 6, ts, event: user('c', 'ta') },
      ]);
      expect(await store.turns('made')).toEqual([
        { turnId: 'ta', firstSeq: 2, lastSeq: 6 },
        { turnId: 'tb', firstSeq: 5, lastSeq: 5 },
      ]);
      await store.append('made', [user('d', 'tb')]);
      expect((await store.readTurn('made', 'tb')).map((e) => e.seq)).toEqual([5, 7]);
      await store.delete('made');
      expect(await store.turns('made')).toEqual([]);
      expect(await store.readTurn('made', 'ta')).toEqual([]);
      await store.append('made', [user('again', 'ta')]);
      expect(await store.turns('made')).toEqual([{ turnId: 'ta', firstSeq: 1, lastSeq: 1 }]);
    });

    it('refuses every call once closed', async () => {
      const { store } = await subject();
      await store.append('a', [user('1')]);
      await store.close();
      await store.close(); // idempotent
      await expect(store.append('a', [user('2')])).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
      await expect(store.read('a')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
      await expect(store.list()).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
      await expect(store.list({ limit: 1 })).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
      await expect(
        store.create('b', [{ seq: 1, ts: '2024-05-01T00:00:00.000Z', event: user('x') }]),
      ).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
      await expect(store.storeId()).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    });

    it('has one identity per medium: stores over it agree (asked at once on a new medium too), another medium has another', async () => {
      const first = await subject();
      const again = await first.reopen?.();
      if (again) opened.push(again);
      const [id, sameMedium = id] = await Promise.all([first.store.storeId(), again?.storeId()]);
      expect(id).toMatch(/^\S+$/);
      expect(sameMedium).toBe(id);
      await first.store.append('s', [user('1')]);
      expect(await first.store.storeId()).toBe(id);
      const later = await first.reopen?.();
      if (later) {
        opened.push(later);
        expect(await later.storeId()).toBe(id);
      }
      expect(await (await subject()).store.storeId()).not.toBe(id);
    });

    it("checks its identity (issue 84): a check finds the one held; a renewal makes a new one, the medium's from then on", async () => {
      const first = await subject();
      const id = await first.store.storeId();
      expect(await first.store.identity('check')).toEqual({ storeId: id });
      const renewed = await first.store.identity('renew');
      expect(renewed.previous).toBe(id);
      expect(renewed.storeId).not.toBe(id);
      expect(await first.store.storeId()).toBe(renewed.storeId);
      expect(await first.store.identity('check')).toEqual({ storeId: renewed.storeId });
      const later = await first.reopen?.();
      if (later) {
        opened.push(later);
        expect(await later.storeId()).toBe(renewed.storeId); // one medium: another store over it finds the new one
      }
    });
  });
}
