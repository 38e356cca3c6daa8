/**
 * A2A `ListTasks` over the store's index by update time: a page reads the sessions it answers (and the next one),
 * not every session of the caller, and pages through every task once, newest first, as a full sort would order them.
 */
import { describe, expect, it } from 'vitest';
import { listTaskPage } from '../../src/a2a-face/list-params.ts';
import { createTurnFollower } from '../../src/agent/index.ts';
import { LOCAL_SESSIONS, sessionAccess, type Principal } from '../../src/auth/index.ts';
import type { SessionEvent } from '../../src/conversation/session-events.ts';
import { compareKeys, sessionKey } from '../../src/session-id.ts';
import { createMemoryStore } from '../../src/store/memory-store.ts';
import type { EventStore } from '../../src/store/types.ts';

type Store = EventStore<SessionEvent>;
const at = (s: number) => new Date(Date.UTC(2026, 0, 1) + s * 1000).toISOString();

/** A finished turn `turnId` at second `s`. */
const turn = (turnId: string, s: number, seq: number) => [
  { seq, ts: at(s), event: { v: 4, type: 'userMessage', turnId, content: 'q' } as SessionEvent },
  {
    seq: seq + 1,
    ts: at(s),
    event: { v: 4, type: 'response', turnId, content: 'a', text: 'a', model: 'm' } as SessionEvent,
  },
];

/** The store, with the sessions whose turns a listing read counted. */
function counted(store: Store) {
  const read = new Set<string>();
  const wrapped: Store = {
    ...store,
    turns: (id, range) => (read.add(id), store.turns(id, range)),
    list: () => Promise.reject(new Error('a listing by recency lists no keys')),
  };
  return { store: wrapped, read };
}

const follower = (store: Store) => createTurnFollower({ bus: { onSession: () => () => undefined }, store });

/** Every page of the listing: the task ids in order, and how many sessions each page read. */
async function pageThrough(store: Store, sessions = LOCAL_SESSIONS, pageSize = 10) {
  const { store: wrapped, read } = counted(store);
  const f = follower(wrapped);
  const ids: string[] = [];
  const reads: number[] = [];
  let pageToken = '';
  do {
    read.clear();
    const page = await listTaskPage(f, sessions, '1.0', { pageSize, pageToken });
    ids.push(...page.tasks.map((t) => (t as { id: string }).id));
    reads.push(read.size);
    pageToken = page.nextPageToken;
  } while (pageToken !== '');
  return { ids, reads };
}

const principal = (name: string): Principal => ({ name, scopes: new Set(['chat']), via: 'key', owner: name });

describe('A2A ListTasks by recency', () => {
  it('a first page reads as many sessions at 2 000 sessions as at 20', async () => {
    const readsAt = async (n: number) => {
      const store = createMemoryStore<SessionEvent>();
      for (let i = 0; i < n; i++) await store.create(`s${i}`, turn('t1', (i * 7919) % n, 1));
      const { store: wrapped, read } = counted(store);
      const page = await listTaskPage(follower(wrapped), LOCAL_SESSIONS, '1.0', { pageSize: 10 });
      expect(page.tasks).toHaveLength(10);
      return read.size;
    };
    const [few, many] = [await readsAt(20), await readsAt(2000)];
    expect(many).toBe(few);
    expect(many).toBeLessThanOrEqual(12); // the page's sessions and the next one
  });

  it('pages through every task once in the order of a full sort, sessions of one time included, reading few sessions a page', async () => {
    const store = createMemoryStore<SessionEvent>();
    const expected: { id: string; session: string; s: number; turnId: string }[] = [];
    for (let i = 0; i < 60; i++) {
      const session = `c${(i * 37) % 60}`;
      const s = Math.floor(i / 6); // six sessions at each time
      const turns = [...turn('t1', s - 1, 1), ...turn('t2', s, 3)];
      await store.create(session, turns);
      expected.push({ id: `${session}/t1`, session, s: s - 1, turnId: 't1' });
      expected.push({ id: `${session}/t2`, session, s, turnId: 't2' });
    }
    expected.sort((a, b) => b.s - a.s || compareKeys(a.session, b.session) || (a.turnId < b.turnId ? -1 : 1));
    const { ids, reads } = await pageThrough(store, LOCAL_SESSIONS, 7);
    expect(ids).toEqual(expected.map((e) => e.id));
    expect(Math.max(...reads.slice(0, 3))).toBeLessThanOrEqual(14); // the early pages stop soon
  });

  it("lists only the caller's own sessions (an admin's: everyone's)", async () => {
    const store = createMemoryStore<SessionEvent>();
    await store.create(sessionKey('alice', 'a'), turn('t1', 1, 1));
    await store.create(sessionKey('bob', 'b'), turn('t1', 2, 1));
    await store.create('plain', turn('t1', 3, 1));
    const options = { strict: true, sessionsPerPrincipal: 10 };
    const idsOf = async (p: Principal) => (await pageThrough(store, sessionAccess(p, '127.0.0.1', options))).ids;
    expect(await idsOf(principal('alice'))).toEqual(['a/t1']);
    expect(await idsOf(principal('bob'))).toEqual(['b/t1']);
    expect(await idsOf({ name: 'anonymous', scopes: new Set(['chat']), via: 'anonymous', owner: undefined })).toEqual([
      'plain/t1',
    ]);
    expect(await idsOf({ ...principal('root'), scopes: new Set(['admin']) })).toEqual(['plain/t1', 'b/t1', 'a/t1']);
  });
});
