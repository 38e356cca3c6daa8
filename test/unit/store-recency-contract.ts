/**
 * `EventStore.recent`'s contract (part of the EventStore contract: store-contract.ts runs it on every engine):
 * sessions newest first, the same time by key in code point order, per owner, paged by cursor, with a kept count,
 * following appends, creates and deletes, and the same for another store over the medium.
 */
import { expect, it } from 'vitest';
import type { SessionEvent } from '../../src/conversation/session-events.ts';
import { compareKeys, sessionKey } from '../../src/session-id.ts';
import type { EventStore, RecentQuery } from '../../src/store/types.ts';
import type { ContractSubject } from './store-contract.ts';

const user = (content: string): SessionEvent => ({ v: 4, type: 'userMessage', turnId: 't1', content });
type Store = EventStore<SessionEvent>;

const ids = async (store: Store, query: RecentQuery) => (await store.recent(query)).sessions.map((s) => s.id);

/** Every page of `query`'s sessions, `limit` at a time, each after the last of the one before. */
async function allPages(store: Store, query: Omit<RecentQuery, 'after'>): Promise<string[]> {
  const seen: string[] = [];
  for (let after: RecentQuery['after']; ;) {
    const { sessions } = await store.recent({ ...query, ...(after && { after }) });
    seen.push(...sessions.map((s) => s.id));
    const last = sessions.at(-1);
    if (sessions.length < query.limit || !last) return seen;
    after = { id: last.id, updatedAt: last.updatedAt };
  }
}

export function recencyContract(subject: () => Promise<ContractSubject>, opened: Store[]): void {
  it('lists sessions most recently updated first, one time by key in code point order, with their count', async () => {
    const { store, clock } = await subject();
    const keys = ['b', '\uFFFD', '🎉', 'a'];
    for (const key of keys) await store.append(key, [user(key)]); // one instant: by key
    clock.advance(1000);
    await store.append('old', [user('1')]);
    clock.advance(1000);
    await store.append('new', [user('1'), user('2')]);
    const page = await store.recent({ limit: 10 });
    expect(page.total).toBe(6);
    expect(page.sessions[0]).toEqual({ id: 'new', lastSeq: 2, updatedAt: '2025-01-02T03:04:07.678Z' });
    expect(page.sessions.map((s) => s.id)).toEqual(['new', 'old', ...[...keys].sort(compareKeys)]);
    expect(await store.recent({ limit: 2 })).toEqual({ sessions: page.sessions.slice(0, 2), total: 6 });
  });

  it('pages from a cursor (the last session of a page, even one since deleted) without skipping or repeating', async () => {
    const { store, clock } = await subject();
    const keys = Array.from({ length: 9 }, (_, i) => `s${i}`);
    for (const [i, key] of keys.entries()) {
      if (i % 3 === 0) clock.advance(1000); // three sessions per instant
      await store.append(key, [user(key)]);
    }
    const newestFirst = ['s6', 's7', 's8', 's3', 's4', 's5', 's0', 's1', 's2'];
    expect(await allPages(store, { limit: 2 })).toEqual(newestFirst);
    expect(await allPages(store, { limit: 3 })).toEqual(newestFirst);
    const [, second] = (await store.recent({ limit: 2 })).sessions;
    await store.delete('s7');
    expect(await ids(store, { after: second!, limit: 3 })).toEqual(['s8', 's3', 's4']);
    expect(await ids(store, { after: { id: 'zz', updatedAt: '2000-01-01T00:00:00.000Z' }, limit: 3 })).toEqual([]);
    expect((await store.recent({ after: second!, limit: 1 })).total).toBe(8);
  });

  it("lists one owner's sessions (keys without an owner: owner '') and counts them apart", async () => {
    const { store, clock } = await subject();
    const alice = (id: string) => sessionKey('alice', id);
    const written = [alice('x'), 'plain', sessionKey('alicia', 'y'), alice('y'), sessionKey('al', 'z'), 'other'];
    for (const key of written) {
      clock.advance(1000);
      await store.append(key, [user(key)]);
    }
    expect(await store.recent({ owner: 'alice', limit: 10 })).toMatchObject({
      sessions: [{ id: alice('y') }, { id: alice('x') }],
      total: 2,
    });
    expect(await ids(store, { owner: 'alice', limit: 1 })).toEqual([alice('y')]);
    expect(await store.recent({ owner: '', limit: 10 })).toMatchObject({
      sessions: [{ id: 'other' }, { id: 'plain' }],
      total: 2,
    });
    expect((await store.recent({ owner: 'nobody', limit: 10 })).total).toBe(0);
    expect(await ids(store, { limit: 10 })).toEqual([...written].reverse());
    const [newest] = (await store.recent({ owner: 'alice', limit: 1 })).sessions;
    expect(await ids(store, { owner: 'alice', after: newest!, limit: 10 })).toEqual([alice('x')]);
  });

  it('follows writes: an append moves its session first, a create places it at its last event, a delete takes it out', async () => {
    const { store, clock, reopen } = await subject();
    for (const key of ['a', 'b', 'c']) {
      clock.advance(1000);
      await store.append(key, [user(key)]);
    }
    expect(await ids(store, { limit: 10 })).toEqual(['c', 'b', 'a']); // the index is in use from here
    clock.advance(1000);
    await store.append('a', [user('again')]);
    await store.create('made', [
      { seq: 1, ts: '2025-01-02T03:04:06.000Z', event: user('1') },
      { seq: 4, ts: '2025-01-02T03:04:07.000Z', event: user('4') },
    ]);
    expect(await store.delete('b')).toBe(true);
    const page = await store.recent({ limit: 10 });
    expect(page.sessions.map((s) => [s.id, s.lastSeq, s.updatedAt])).toEqual([
      ['a', 2, '2025-01-02T03:04:09.678Z'],
      ['c', 1, '2025-01-02T03:04:08.678Z'],
      ['made', 4, '2025-01-02T03:04:07.000Z'],
    ]);
    expect(page.total).toBe(3);
    expect(await store.delete('made')).toBe(true);
    expect(await store.delete('made')).toBe(false);
    expect(await store.recent({ limit: 10 })).toMatchObject({ sessions: [{ id: 'a' }, { id: 'c' }], total: 2 });
    // Another store over the medium (one that reads the logs again) lists the same.
    const later = reopen ? await reopen() : undefined;
    if (later) {
      opened.push(later);
      expect(await later.recent({ limit: 10 })).toEqual(await store.recent({ limit: 10 }));
    }
  });

  it('a write made while the first page is being answered is listed by the next one', async () => {
    const { store, clock } = await subject();
    for (const key of ['a', 'b']) {
      clock.advance(1000);
      await store.append(key, [user(key)]);
    }
    clock.advance(1000);
    const first = store.recent({ limit: 10 });
    const written = Promise.all([store.append('a', [user('meanwhile')]), store.delete('b')]);
    await Promise.all([first, written]);
    expect(await store.recent({ limit: 10 })).toMatchObject({
      sessions: [{ id: 'a', lastSeq: 2, updatedAt: '2025-01-02T03:04:08.678Z' }],
      total: 1,
    });
  });

  it('an empty store lists nothing', async () => {
    const { store } = await subject();
    expect(await store.recent({ limit: 5 })).toEqual({ sessions: [], total: 0 });
    expect(await store.recent({ owner: 'alice', limit: 5 })).toEqual({ sessions: [], total: 0 });
  });
}
