import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors/index.ts';
import { createMemoryService, memoryStoresOf, SHARED_OWNER } from '../../src/memory/index.ts';
import { pino } from 'pino';

const T = Date.parse('2026-11-27T09:00:00.000Z');

function subject(config = { profileMaxChars: 40, searchLimit: 5 }) {
  let now = T;
  let n = 0;
  const stores = memoryStoresOf({ type: 'memory', maxSessionsInMemory: 10 }, pino({ level: 'silent' }), undefined);
  const memory = createMemoryService({
    ...stores,
    config,
    clock: { now: () => (now += 1000) },
    ids: () => `m${++n}`,
  });
  return { memory, ...stores };
}

const errorOf = async (p: Promise<unknown>): Promise<AppError> => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
};

describe('memory service', () => {
  it('saves items with their origin and lists them newest first; forgets one', async () => {
    const { memory } = subject();
    const first = await memory.save('alice', { text: 'Alice drinks green tea', tags: ['drink', 'drink'] });
    await memory.save('alice', { text: 'Alice lives in Lyon', sessionId: 's1', turnId: 't1' });
    expect(first).toMatchObject({ id: 'm1', tags: ['drink'], createdAt: '2026-11-27T09:00:01.000Z' });
    expect((await memory.list('alice')).map((i) => [i.text, i.sessionId])).toEqual([
      ['Alice lives in Lyon', 's1'],
      ['Alice drinks green tea', undefined],
    ]);
    expect(await memory.forget('alice', 'm1')).toBe(true);
    expect(await memory.forget('alice', 'm1')).toBe(false);
    expect(await memory.forget('bob', 'm2')).toBe(false);
    expect((await memory.list('alice')).map((i) => i.id)).toEqual(['m2']);
  });

  it('refuses an empty or oversized item, and too many tags', async () => {
    const { memory } = subject();
    expect((await errorOf(memory.save('alice', { text: '  ' }))).details).toMatchObject({ field: 'text' });
    expect((await errorOf(memory.save('alice', { text: 'x'.repeat(4001) }))).code).toBe('INVALID_REQUEST');
    const tags = Array.from({ length: 21 }, (_, i) => `t${i}`);
    expect((await errorOf(memory.save('alice', { text: 'x', tags }))).details).toMatchObject({ field: 'tags' });
    expect(await memory.list('alice')).toEqual([]);
  });

  it('bounds the profile by profileMaxChars with an error that says so', async () => {
    const { memory } = subject();
    expect(await memory.profile('alice')).toBe('');
    await memory.setProfile('alice', 'Alice, a baker in Lyon', { sessionId: 's1' });
    const err = await errorOf(memory.setProfile('alice', 'y'.repeat(41)));
    expect(err.code).toBe('INVALID_REQUEST');
    expect(err.message).toMatch(/41 characters; memory\.profileMaxChars allows 40/);
    expect(err.details).toMatchObject({ field: 'text', limit: 40, length: 41 });
    expect(await memory.profile('alice')).toBe('Alice, a baker in Lyon');
    expect(await memory.profile('bob')).toBe('');
  });

  it("ranks the owner's items and the shared ones, never another owner's", async () => {
    const { memory } = subject();
    await memory.save('alice', { text: 'Alice prefers green tea in the morning' });
    await memory.save('alice', { text: 'Alice has a cat named Miso' });
    await memory.save('bob', { text: 'Bob prefers black tea' });
    await memory.save(SHARED_OWNER, { text: 'The office tea kitchen is on floor 3', tags: ['office'] });
    const hits = await memory.search('alice', 'tea');
    expect(hits.map((h) => [h.item.text, h.shared])).toEqual(
      expect.arrayContaining([
        ['Alice prefers green tea in the morning', false],
        ['The office tea kitchen is on floor 3', true],
      ]),
    );
    expect(hits).toHaveLength(2);
    expect(hits[0]!.score).toBeGreaterThanOrEqual(hits[1]!.score);
    expect((await memory.search('alice', 'miso')).map((h) => h.item.id)).toEqual(['m2']);
    expect((await memory.search('alice', 'gren')).map((h) => h.item.id)).toEqual(['m1']); // typos
    expect(await memory.search('alice', 'black')).toEqual([]);
    expect(await memory.search('alice', '   ')).toEqual([]);
    expect(await memory.search('alice', 'tea', 1)).toHaveLength(1);
    expect((await memory.search(SHARED_OWNER, 'tea')).map((h) => h.shared)).toEqual([false]);
  });

  it('exports an owner whole, and erases it from the store with an audit record', async () => {
    const { memory, store, audit } = subject();
    await memory.save('alice', { text: 'Alice drinks green tea' });
    await memory.setProfile('alice', 'Alice');
    await memory.save('bob', { text: 'Bob' });
    const exported = await memory.export('alice');
    expect(exported).toMatchObject({ owner: 'alice', profile: 'Alice', items: [{ text: 'Alice drinks green tea' }] });
    expect(await memory.erase('alice', 'root')).toEqual({ items: 1, profile: true });
    expect(await store.read('alice')).toEqual([]);
    expect(await memory.export('alice')).toMatchObject({ profile: '', items: [] });
    expect((await memory.list('bob')).length).toBe(1);
    expect(await audit.read()).toEqual([
      { type: 'memoryErased', at: expect.any(String), by: 'root', owner: 'alice', items: 1, profile: true },
    ]);
  });
});
