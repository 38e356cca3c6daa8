/**
 * `EventStore.turnTotal`'s contract (part of the EventStore contract: store-contract.ts runs it on every engine): how
 * many turns (distinct turn ids) the sessions of an owner hold, and every session's, kept with the writes — an append
 * that begins a turn adds one, a create counts its log, a delete takes its session's out — and the same for another
 * store over the medium (a restart).
 */
import { expect, it } from 'vitest';
import type { SessionEvent } from '../../src/conversation/session-events.ts';
import { sessionKey } from '../../src/session-id.ts';
import type { EventStore } from '../../src/store/types.ts';
import type { ContractSubject } from './store-contract.ts';

type Store = EventStore<SessionEvent>;
const msg = (turnId: string, content = 'hi'): SessionEvent => ({ v: 4, type: 'userMessage', turnId, content });
const reply = (turnId: string): SessionEvent => ({
  v: 4,
  type: 'response',
  turnId,
  content: 'ok',
  text: 'ok',
  model: 'm',
});
const reset: SessionEvent = { v: 4, type: 'reset' };

const alice = (id: string) => sessionKey('alice', id);
const bob = (id: string) => sessionKey('bob', id);

/** Every engine's totals for the owners the tests write, and every session's. */
async function totals(store: Store) {
  const [all, a, b, plain, nobody] = await Promise.all([
    store.turnTotal(),
    store.turnTotal('alice'),
    store.turnTotal('bob'),
    store.turnTotal(''),
    store.turnTotal('nobody'),
  ]);
  return { all, alice: a, bob: b, plain, nobody };
}

export function turnTotalsContract(subject: () => Promise<ContractSubject>, opened: Store[]): void {
  it('keeps the turns per owner and overall: a new turn id adds one, more events of a turn add none, a create counts its log', async () => {
    const { store, clock } = await subject();
    expect(await totals(store)).toEqual({ all: 0, alice: 0, bob: 0, plain: 0, nobody: 0 });
    await store.append(alice('x'), [msg('t1'), reply('t1')]);
    await store.append(alice('x'), [reset]); // no turn
    clock.advance(1000);
    await store.append(alice('x'), [msg('t2')]);
    await store.append(alice('x'), [reply('t2'), msg('t1', 'the first again')]); // t1 is not new
    await store.append(alice('y'), [msg('t1')]); // the same turn id in another session: another turn
    await store.append(bob('z'), [msg('a'), msg('b'), msg('c')]);
    await store.append('plain', [msg('p')]);
    await store.create(alice('made'), [
      { seq: 1, ts: '2025-01-02T03:04:00.000Z', event: msg('m1') },
      { seq: 3, ts: '2025-01-02T03:04:01.000Z', event: reply('m1') },
      { seq: 4, ts: '2025-01-02T03:04:02.000Z', event: msg('m2') },
    ]);
    expect(await totals(store)).toEqual({ all: 9, alice: 5, bob: 3, plain: 1, nobody: 0 });
    // The count follows the turn index: each session's turns add up to its owner's total.
    const turnsOf = async (id: string) => (await store.turns(id)).length;
    expect((await Promise.all([alice('x'), alice('y'), alice('made')].map(turnsOf))).reduce((a, b) => a + b)).toBe(5);
  });

  it('a delete takes its session\u2019s turns out; the same key written again starts from none', async () => {
    const { store } = await subject();
    await store.append(alice('x'), [msg('t1'), msg('t2')]);
    await store.append(alice('y'), [msg('t1')]);
    await store.append(bob('z'), [msg('t1')]);
    expect(await totals(store)).toMatchObject({ all: 4, alice: 3, bob: 1 });
    expect(await store.delete(alice('x'))).toBe(true);
    expect(await totals(store)).toMatchObject({ all: 2, alice: 1, bob: 1 });
    expect(await store.delete(alice('x'))).toBe(false);
    expect(await totals(store)).toMatchObject({ all: 2, alice: 1, bob: 1 });
    await store.append(alice('x'), [msg('t1')]);
    expect(await totals(store)).toMatchObject({ all: 3, alice: 2, bob: 1 });
    await store.delete(alice('y'));
    await store.delete(alice('x'));
    await store.delete(bob('z'));
    expect(await totals(store)).toEqual({ all: 0, alice: 0, bob: 0, plain: 0, nobody: 0 });
  });

  it('another store over the medium (a restart) reads the same totals, and keeps them from there', async () => {
    const { store, reopen } = await subject();
    await store.append(alice('x'), [msg('t1'), reply('t1')]);
    await store.append(alice('x'), [msg('t2')]);
    await store.append(bob('z'), [msg('t1')]);
    await store.append('plain', [msg('t1')]);
    await store.delete('plain');
    const before = await totals(store);
    expect(before).toEqual({ all: 3, alice: 2, bob: 1, plain: 0, nobody: 0 });
    const later = reopen ? await reopen() : undefined;
    if (!later) return; // the memory engine: nothing outlives it
    opened.push(later);
    expect(await totals(later)).toEqual(before);
    await store.close(); // the one writer from here (a JSONL directory has one)
    await later.append(alice('x'), [msg('t3'), msg('t1')]);
    await later.delete(bob('z'));
    expect(await totals(later)).toEqual({ all: 3, alice: 3, bob: 0, plain: 0, nobody: 0 });
  });

  it('counts the turns written while the totals are first read', async () => {
    const { store, reopen } = await subject();
    for (const id of ['a', 'b', 'c']) await store.append(alice(id), [msg('t1')]);
    const reader = reopen ? await reopen() : store; // a restart: totals not read yet
    if (reader !== store) {
      opened.push(reader);
      await store.close();
    }
    const first = reader.turnTotal('alice');
    const written = Promise.all([
      reader.append(alice('a'), [msg('t2')]),
      reader.append(alice('d'), [msg('t1')]),
      reader.delete(alice('b')),
    ]);
    await Promise.all([first, written]);
    expect(await reader.turnTotal('alice')).toBe(4);
    expect(await reader.turnTotal()).toBe(4);
  });
}
