/**
 * `followTurn` (src/agent/follow): a turn's stored steps through the store's turn index, then its live steps,
 * no gap, no duplicate; the session replay that shares its seam.
 */
import { describe, expect, it } from 'vitest';
import {
  createTurnFollower,
  toFrame,
  type AgentCommands,
  type AgentEvents,
  type SessionStoredEvent,
  type TurnStep,
} from '../../src/agent/index.ts';
import { createBus } from '../../src/bus/index.ts';
import type { SessionEvent } from '../../src/conversation/session-events.ts';
import { createLogger } from '../../src/log/index.ts';
import { createMemoryStore } from '../../src/store/memory-store.ts';
import { manualClock } from './store-contract.ts';

const user = (turnId: string): SessionEvent => ({ v: 4, type: 'userMessage', turnId, content: `q ${turnId}` });
const call = (turnId: string, callId: string): SessionEvent => ({
  v: 4,
  type: 'toolCall',
  turnId,
  callId,
  toolName: 'echo',
  serverId: 'e',
  args: {},
});
const reply = (turnId: string): SessionEvent => ({
  v: 4,
  type: 'response',
  turnId,
  content: 'done',
  text: 'done',
  model: 'm',
});
const ref = (turnId: string, seq: number) => ({ sessionId: 's', turnId, seq });
const approval = (turnId: string, id: string): SessionEvent => ({
  v: 4,
  type: 'questionAsked',
  turnId,
  question: {
    id,
    kind: 'approval',
    callId: id,
    serverId: 'e',
    toolName: 'echo',
    args: {},
    expiresAt: '2030-01-01T00:00:00.000Z',
  },
});
const approved = (turnId: string, id: string): SessionEvent => ({
  v: 4,
  type: 'questionClosed',
  turnId,
  id,
  answer: { decision: 'approve' },
  by: 'rest',
});
/** What a step says, in short: its fact's frame (or type) and seq, a transient frame, or what the turn waits for. */
const said = (step: TurnStep) =>
  step.kind === 'fact'
    ? `${toFrame(step.stored)?.event ?? step.stored.event.type} ${step.stored.seq}`
    : step.kind === 'awaiting'
      ? `awaiting ${step.data.seq} ${step.data.questionIds.join(',')}`
      : `${step.frame.event} ${step.frame.data.seq ?? '-'}`;
/** A fact as the session publishes it once stored (`agent.stored`). */
const stored = (event: SessionEvent, seq: number, ts = '2029-01-01T00:00:00.000Z'): SessionStoredEvent => ({
  sessionId: 's',
  seq,
  ts,
  event,
});

function setup() {
  const clock = manualClock();
  const bus = createBus<AgentCommands, AgentEvents>({ log: createLogger('silent'), clock });
  const store = createMemoryStore<SessionEvent>({ clock });
  let gate: Promise<void> | undefined;
  let reading = false;
  const gated = {
    ...store,
    readTurn: async (...args: Parameters<typeof store.readTurn>) => {
      reading = true;
      await gate;
      return store.readTurn(...args);
    },
  };
  const watches: string[] = [];
  const interest = {
    watch: (id: string) => (watches.push(`+${id}`), Promise.resolve()),
    unwatch: (id: string) => void watches.push(`-${id}`),
  };
  const follower = createTurnFollower({ bus, store: gated, interest });
  /** Holds the next turn read until the returned function is called. */
  const hold = () => {
    let release = () => {};
    gate = new Promise<void>((r) => (release = r));
    return release;
  };
  return { bus, store, follower, watches, hold, reading: () => reading, clock };
}

describe('followTurn', () => {
  it('hands on the stored steps, then what arrived during the read and later, each once, in order, and stops at the end', async () => {
    const { bus, store, follower, hold, reading } = setup();
    await store.append('s', [
      user('t1'),
      { v: 4, type: 'messageQueued', turnId: 't2', correlationId: 'c', content: 'next' },
      call('t1', 'c1'),
    ]);
    const steps: string[] = [];
    const release = hold();
    const following = follower.followTurn('s', 't1', (step) => steps.push(said(step)));
    await expect.poll(reading).toBe(true);
    // Meanwhile: a fact the read will hold too (stored at seq 3), a chunk, a fact of another turn.
    bus.emit('agent.stored', stored(call('t1', 'c1'), 3));
    bus.emit('agent.chunk', { ...ref('t1', 3), content: 'Hel' });
    bus.emit('agent.stored', stored(user('t2'), 4));
    release();
    const watch = await following;
    expect(watch.known).toBe(true);
    bus.emit('agent.stored', stored(reply('t1'), 5));
    bus.emit('agent.chunk', { ...ref('t1', 5), content: 'late' });
    expect(steps).toEqual(['userMessage 1', 'toolCall 3', 'chunk 3', 'response 5']);
    watch.close();
  });

  it('never drops an error nothing stored, though it carries the seq of a stored fact of its turn', async () => {
    const { bus, store, follower } = setup();
    await store.append('s', [user('t1'), call('t1', 'c1')]);
    const steps: string[] = [];
    const watch = await follower.followTurn('s', 't1', (step) => steps.push(said(step)));
    bus.emit('agent.error', {
      code: 'AGENT_ERROR',
      message: 'The turn could not be stored',
      details: { reason: 'storage' },
      ...ref('t1', 2),
    });
    expect(steps).toEqual(['userMessage 1', 'toolCall 2', 'error 2']);
    watch.close();
  });

  it('stamps facts with the time they were stored, read or live, and transient frames with the time they were emitted', async () => {
    const { bus, store, follower, clock } = setup();
    const [first] = await store.append('s', [user('t1')]);
    clock.advance(5000);
    const steps: TurnStep[] = [];
    const watch = await follower.followTurn('s', 't1', (step) => steps.push(step));
    bus.emit('agent.stored', stored(call('t1', 'c1'), 2, '2030-01-01T00:00:00.000Z'));
    bus.emit('agent.chunk', { ...ref('t1', 2), content: 'x' });
    expect(steps.map((s) => new Date(s.ts).toISOString())).toEqual([
      first?.ts,
      '2030-01-01T00:00:00.000Z',
      new Date(clock.now()).toISOString(),
    ]);
    watch.close();
  });

  it('tells a turn the store does not know; hands on the queued message of one that waits; skips steps up to `since`', async () => {
    const { store, follower } = setup();
    await store.append('s', [
      user('t1'),
      { v: 4, type: 'messageQueued', turnId: 't2', correlationId: 'c', content: 'next' },
      reply('t1'),
    ]);
    const unknown = await follower.followTurn('s', 'nope', () => undefined);
    expect(unknown.known).toBe(false);
    unknown.close();
    expect((await follower.steps('s', 't2')).map(said)).toEqual(['messageQueued 2']);
    const steps: string[] = [];
    (await follower.followTurn('s', 't1', (step) => steps.push(said(step)), 1)).close();
    expect(steps).toEqual(['response 3']);
  });

  it('ends a stored turn that still waits with one awaiting naming every open question, stamped when they last changed', async () => {
    const { store, follower, clock } = setup();
    await store.append('s', [
      user('t1'),
      call('t1', 'c1'),
      approval('t1', 'c1'),
      call('t1', 'c2'),
      approval('t1', 'c2'),
    ]);
    const asked = clock.now();
    clock.advance(1000);
    await store.append('s', [call('t1', 'c3')]);
    const steps = await follower.steps('s', 't1');
    expect(steps.map(said).slice(-2)).toEqual(['toolCall 6', 'awaiting 6 c1,c2']);
    expect(steps.at(-1)?.ts).toBe(asked);
    await store.append('s', [approved('t1', 'c1')]);
    expect((await follower.steps('s', 't1')).map(said).at(-1)).toBe('awaiting 7 c2');
    await store.append('s', [approved('t1', 'c2')]);
    expect((await follower.steps('s', 't1')).map(said).at(-1)).toBe('toolApprovalResolved 8');
    await store.append('s', [approval('t1', 'c4'), reply('t1')]);
    expect((await follower.steps('s', 't1')).map(said).at(-1)).toBe('response 10'); // an ended turn waits for nothing
  });

  it('hands on a live awaiting of its turn once, after the read: one the read already implies is dropped', async () => {
    const { bus, store, follower, hold, reading } = setup();
    await store.append('s', [user('t1'), call('t1', 'c1'), approval('t1', 'c1')]);
    const steps: string[] = [];
    const release = hold();
    const following = follower.followTurn('s', 't1', (step) => steps.push(said(step)));
    await expect.poll(reading).toBe(true);
    bus.emit('agent.awaiting', { ...ref('t1', 3), questionIds: ['c1'] }); // published before the read: in it
    release();
    const watch = await following;
    bus.emit('agent.awaiting', { ...ref('t2', 4), questionIds: ['x'] }); // another turn's
    bus.emit('agent.stored', stored(approved('t1', 'c1'), 4));
    bus.emit('agent.stored', stored(approval('t1', 'c2'), 5));
    bus.emit('agent.awaiting', { ...ref('t1', 5), questionIds: ['c2'] });
    expect(steps).toEqual([
      'userMessage 1',
      'toolCall 2',
      'toolApprovalRequested 3',
      'awaiting 3 c1',
      'toolApprovalResolved 4',
      'toolApprovalRequested 5',
      'awaiting 5 c2',
    ]);
    watch.close();
  });

  it('asks for the session from other instances before it reads, and gives the interest back on close', async () => {
    const { store, follower, watches } = setup();
    await store.append('s', [user('t1')]);
    const watch = follower.watch('s');
    expect(watches).toEqual(['+s']);
    await watch.follow('t1', () => undefined);
    watch.close();
    watch.close();
    expect(watches).toEqual(['+s', '-s']);
  });
});

describe('followSent', () => {
  it('hands on the steps of the command it follows (by correlation id until the turn is named, then by turn), live, until its end', () => {
    const { bus, follower, watches } = setup();
    const steps: string[] = [];
    const sent = follower.followSent('s', 'corr-1', (step) => steps.push(said(step)));
    bus.emit('agent.stored', stored(user('t1'), 1), { correlationId: 'corr-1' });
    bus.emit('agent.stored', stored(user('t0'), 2), { correlationId: 'corr-0' });
    sent.named('t1');
    bus.emit('agent.stored', stored(call('t1', 'c1'), 3), { correlationId: 'taken-over' });
    bus.emit('agent.stored', stored(reply('t1'), 4), { correlationId: 'corr-1' });
    bus.emit('agent.chunk', { ...ref('t1', 4), content: 'late' }, { correlationId: 'corr-1' });
    sent.close();
    expect(steps).toEqual(['userMessage 1', 'toolCall 3', 'response 4']);
    expect(watches).toEqual([]); // the cluster watches a turn it forwards
  });
});

describe('replay', () => {
  it("hands on a session's stored facts after a seq, until the log has nothing newer", async () => {
    const { store, follower } = setup();
    await store.append('s', [
      user('t1'),
      { v: 4, type: 'messageQueued', turnId: 't2', correlationId: 'c', content: 'next' },
      reply('t1'),
      user('t2'),
    ]);
    const frames: string[] = [];
    await follower.replay(
      's',
      1,
      (f) => void frames.push(`${f.event.type} ${f.seq}`),
      () => false,
    );
    expect(frames).toEqual(['messageQueued 2', 'response 3', 'userMessage 4']);
    await follower.replay(
      's',
      undefined,
      () => void frames.push('none'),
      () => false,
    );
    expect(frames).toHaveLength(3);
  });

  it('waits for the promise a delivery returns before the next fact, and hands on none once closed', async () => {
    const { store, follower } = setup();
    await store.append('s', [user('t1'), reply('t1'), user('t2'), reply('t2')]);
    const seqs: number[] = [];
    const rooms: Array<() => void> = [];
    let closed = false;
    const replaying = follower.replay(
      's',
      0,
      (f) => {
        seqs.push(f.seq);
        return new Promise<void>((resolve) => rooms.push(resolve));
      },
      () => closed,
    );
    await expect.poll(() => seqs).toEqual([1]);
    rooms.shift()!();
    await expect.poll(() => seqs).toEqual([1, 2]);
    closed = true;
    rooms.shift()!();
    await replaying;
    expect(seqs).toEqual([1, 2]);
  });
});
