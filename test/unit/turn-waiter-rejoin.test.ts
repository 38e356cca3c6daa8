/**
 * `rejoin` of src/agent/follow/turn-waiter.ts: a turn asked elsewhere is adopted through `followTurn` (src/agent/follow)
 * from its session's log and its live facts, without losing or double-applying a fact that arrives while
 * the log is read.
 */
import { describe, expect, it } from 'vitest';
import { createTurnFollower, createTurnWaiter, type AgentCommands, type AgentEvents } from '../../src/agent/index.ts';
import { createBus } from '../../src/bus/index.ts';
import type { SessionEvent } from '../../src/conversation/session-events.ts';
import { createLogger } from '../../src/log/index.ts';
import { createMemoryStore } from '../../src/store/memory-store.ts';
import { sessionKey } from '../../src/session-id.ts';
import { stored } from '../support/facts.ts';

const S = sessionKey(undefined, 's');
const turn = { correlationId: 'corr-1', sessionId: S, turnId: 't1' };
const askedEvent = (callId: string): SessionEvent => ({
  v: 4,
  type: 'questionAsked',
  turnId: 't1',
  question: {
    id: callId,
    kind: 'approval',
    callId,
    serverId: 'echo',
    toolName: 'echo',
    args: {},
    expiresAt: '2099-01-01T00:00:00.000Z',
  },
});
const at = '2026-01-01T00:00:00.000Z';
const asked = (callId: string, seq: number) => stored(askedEvent(callId), seq, at);
/** The turn's `response` as stored at `seq`. */
const replied = (content: string, seq: number) =>
  stored({ v: 4, type: 'response', turnId: 't1', content, text: content, model: 'm' }, seq, at);
const user: SessionEvent = { v: 4, type: 'userMessage', turnId: 't1', content: 'hi' };

/** The session's log holds `events`; its turn is read once `release()` is called; the watches asked for. */
async function setup(events: SessionEvent[]) {
  const bus = createBus<AgentCommands, AgentEvents>({ log: createLogger('silent') });
  const store = createMemoryStore<SessionEvent>();
  if (events.length > 0) await store.append('s', events);
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  let reading = false;
  const gated = {
    ...store,
    readTurn: async (...args: Parameters<typeof store.readTurn>) => (
      (reading = true),
      await gate,
      store.readTurn(...args)
    ),
  };
  const watches: string[] = [];
  const interest = {
    watch: (id: string) => (watches.push(`+${id}`), Promise.resolve()),
    unwatch: (id: string) => void watches.push(`-${id}`),
  };
  const waiter = createTurnWaiter(bus, 60_000, createTurnFollower({ bus, store: gated, interest }));
  return { bus, waiter, watches, release: () => release(), reading: () => reading };
}

describe('rejoining a turn asked elsewhere', () => {
  it('given a turn that ends live while the log is read, its end is not lost', async () => {
    const { bus, waiter, release, reading } = await setup([user, askedEvent('c1')]);
    const joining = waiter.rejoin(turn);
    await expect.poll(reading).toBe(true);
    bus.emit('agent.stored', asked('c1', 2), { correlationId: 'corr-1' }); // also in the log: applied once
    bus.emit('agent.stored', replied('meanwhile', 7), { correlationId: 'corr-1' });
    release();
    const { reply } = await joining;
    expect((await reply).content).toBe('meanwhile');
  });

  it('given a turn the log shows ended, the reply answers at once and the watch is given back', async () => {
    const { waiter, watches, release } = await setup([
      user,
      { v: 4, type: 'response', turnId: 't1', content: 'done', text: 'done', model: 'm' },
    ]);
    release();
    const { reply } = await waiter.rejoin(turn);
    expect((await reply).content).toBe('done');
    await expect.poll(() => watches).toEqual(['+s', '-s']);
  });

  it('given a turn that ends live after the log was read, the reply comes from its live end, matched by turn id', async () => {
    const { bus, waiter, release } = await setup([user, askedEvent('c1')]);
    release();
    const { reply } = await waiter.rejoin(turn);
    bus.emit('agent.stored', replied('later', 9), { correlationId: 'another-correlation' });
    expect((await reply).content).toBe('later');
  });

  it('given a turn the log does not know, or no turn id, the reply fails as unknown_turn', async () => {
    const { waiter, release } = await setup([]);
    release();
    await expect((await waiter.rejoin(turn)).reply).rejects.toMatchObject({ details: { reason: 'unknown_turn' } });
    await expect((await waiter.rejoin({ correlationId: 'corr-2', sessionId: S })).reply).rejects.toMatchObject({
      details: { reason: 'unknown_turn' },
    });
  });

  it('asks: the turn is named once its command answers, and its end answers, matched by turn once named', async () => {
    const { bus, waiter } = await setup([]);
    bus.handle('agent.sendMessage', ({ correlationId }) => {
      // Facts of the turn before the command answers carry its correlation id.
      bus.emit('agent.stored', asked('c1', 2), { correlationId });
      return { turnId: 't1', queued: false };
    });
    const reply = waiter.ask({ sessionId: S, content: 'hi' }, { correlationId: 'corr-9' });
    await expect.poll(() => waiter.turnOf('corr-9')).toBe('t1');
    bus.emit('agent.stored', replied('asked', 4), { correlationId: 'taken-over' });
    expect((await reply).content).toBe('asked');
  });

  it('given a second retry while the first adopts the turn, both follow the same reply', async () => {
    const { bus, waiter, release } = await setup([user, askedEvent('c1')]);
    const first = waiter.rejoin(turn);
    const second = waiter.rejoin(turn);
    release();
    const [a, b] = await Promise.all([first, second]);
    expect(a.reply).toBe(b.reply);
    bus.emit('agent.stored', replied('once', 9), { correlationId: 'corr-1' });
    expect((await b.reply).content).toBe('once');
  });
});
