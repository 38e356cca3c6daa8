import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { parseSessionEvent, type SessionEvent } from '../../src/conversation/session-events.ts';
import { createMemoryStore } from '../../src/store/memory-store.ts';
import { createStore } from '../../src/store/index.ts';
import { eventStoreContract, manualClock, user } from './store-contract.ts';

eventStoreContract('memory', async () => {
  const clock = manualClock();
  return Promise.resolve({ store: createMemoryStore<SessionEvent>({ clock }), clock });
});

describe('memory store', () => {
  it('keeps nothing across instances', async () => {
    const a = createMemoryStore<SessionEvent>();
    await a.append('s', [user('1')]);
    expect(await createMemoryStore().read('s')).toEqual([]);
  });

  it('is what createStore builds for { type: "memory" }', async () => {
    const clock = manualClock();
    const store = createStore(
      { type: 'memory' },
      { log: pino({ level: 'silent' }), clock, parseEvent: parseSessionEvent },
    );
    const [e] = await store.append('s', [user('1')]);
    expect(e?.ts).toBe(new Date(clock.now()).toISOString());
    await store.close();
  });
});
