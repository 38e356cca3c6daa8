import { describe, expect, it, vi } from 'vitest';
import { pino } from 'pino';
import { createBus } from '../../src/bus/index.ts';
import { PATIENT } from '../support/wait.ts';

type Commands = {
  add: { payload: { a: number; b: number }; result: number };
  fail: { payload: Record<string, never>; result: void };
  ask: { payload: { sessionId: string; q: string }; result: number };
};
type Events = { tick: { n: number }; other: { s: string }; said: { sessionId: string; text: string } };

function setup() {
  const errors: unknown[] = [];
  const log = pino({ level: 'error' }, { write: (line: string) => void errors.push(JSON.parse(line)) });
  let t = 1000;
  let id = 0;
  const bus = createBus<Commands, Events>({ log, clock: { now: () => t++ }, ids: () => `id${++id}` });
  return { bus, errors };
}

describe('bus commands', () => {
  it('runs the one handler and resolves with its result', async () => {
    const { bus } = setup();
    bus.handle('add', ({ payload }) => payload.a + payload.b);
    await expect(bus.execute('add', { a: 2, b: 3 })).resolves.toBe(5);
  });

  it('refuses a second handler for the same command', () => {
    const { bus } = setup();
    bus.handle('add', () => 0);
    expect(() => bus.handle('add', () => 1)).toThrow(/already has a handler/);
  });

  it('rejects when no handler is registered, and after unregistering', async () => {
    const { bus } = setup();
    await expect(bus.execute('add', { a: 1, b: 1 })).rejects.toMatchObject({ code: 'INTERNAL_ERROR' });
    const off = bus.handle('add', () => 2);
    off();
    await expect(bus.execute('add', { a: 1, b: 1 })).rejects.toThrow(/no handler/);
  });

  it('passes handler errors to the caller', async () => {
    const { bus } = setup();
    bus.handle('fail', () => Promise.reject(new Error('boom')));
    await expect(bus.execute('fail', {})).rejects.toThrow('boom');
  });

  it("gives the handler an envelope with id, timestamp, correlation id and the payload's session", async () => {
    const { bus } = setup();
    const seen = vi.fn();
    bus.handle('ask', (env) => (seen(env), 0));
    bus.handle('add', (env) => (seen(env), 0));
    await bus.execute('ask', { sessionId: 's1', q: 'why' });
    await bus.execute('add', { a: 1, b: 2 }, { correlationId: 'corr-9' });
    expect(seen.mock.calls[0]![0]).toEqual({
      id: 'id1',
      ts: 1000,
      correlationId: 'id1',
      sessionId: 's1',
      name: 'ask',
      payload: { sessionId: 's1', q: 'why' },
    });
    expect(seen.mock.calls[1]![0]).toMatchObject({ correlationId: 'corr-9' });
    expect(seen.mock.calls[1]![0]).not.toHaveProperty('sessionId');
  });
});

describe('bus events', () => {
  it('delivers to every listener of that event, and to onAny listeners', () => {
    const { bus } = setup();
    const a = vi.fn();
    const b = vi.fn();
    const any = vi.fn();
    const other = vi.fn();
    bus.on('tick', a);
    bus.on('tick', b);
    bus.on('other', other);
    bus.onAny(any);
    const env = bus.emit('tick', { n: 1 }, { correlationId: 'c' });
    expect(a).toHaveBeenCalledWith(env);
    expect(b).toHaveBeenCalledWith(env);
    expect(any).toHaveBeenCalledWith(env);
    expect(other).not.toHaveBeenCalled();
    expect(env).toMatchObject({ name: 'tick', payload: { n: 1 }, correlationId: 'c' });
  });

  it("delivers a session's events to its listeners, first, then to the name's and onAny's", () => {
    const { bus } = setup();
    const heard: string[] = [];
    bus.onAny((e) => void heard.push(`any ${e.name}`));
    bus.on('said', (e) => void heard.push(`name ${e.payload.text}`));
    bus.onSession('s1', (e) => void heard.push(`s1 ${e.name} ${e.sessionId}`));
    bus.onSession('s2', (e) => void heard.push(`s2 ${e.name}`));
    const env = bus.emit('said', { sessionId: 's1', text: 'hi' });
    bus.emit('tick', { n: 1 });
    expect(env.sessionId).toBe('s1');
    expect(heard).toEqual(['s1 said s1', 'name hi', 'any said', 'any tick']);
  });

  it('skips a session listener that unsubscribed during delivery, and gives one subscribed meanwhile the next event', () => {
    const { bus } = setup();
    const heard: string[] = [];
    let offB = () => undefined as void;
    bus.onSession('s', (e) => {
      heard.push(`a ${(e.payload as { text: string }).text}`);
      offB();
      bus.onSession('s', (late) => void heard.push(`c ${(late.payload as { text: string }).text}`));
    });
    offB = bus.onSession('s', (e) => void heard.push(`b ${(e.payload as { text: string }).text}`));
    bus.emit('said', { sessionId: 's', text: '1' });
    bus.emit('said', { sessionId: 's', text: '2' });
    expect(heard).toEqual(['a 1', 'a 2', 'c 2']);
  });

  it('keeps delivering to the others when a session listener throws', () => {
    const { bus, errors } = setup();
    const after = vi.fn();
    const off = bus.onSession('s', () => {
      throw new Error('session listener broke');
    });
    bus.onSession('s', after);
    bus.on('said', after);
    bus.emit('said', { sessionId: 's', text: 'x' });
    expect(after).toHaveBeenCalledTimes(2);
    expect(errors[0]).toMatchObject({ msg: 'bus listener threw', event: 'said' });
    off();
    bus.emit('said', { sessionId: 's', text: 'y' });
    expect(after).toHaveBeenCalledTimes(4);
    expect(errors).toHaveLength(1);
  });

  it('keeps delivering when a listener throws, and logs the failure', () => {
    const { bus, errors } = setup();
    const after = vi.fn();
    bus.on('tick', () => {
      throw new Error('listener broke');
    });
    bus.on('tick', after);
    bus.emit('tick', { n: 1 });
    expect(after).toHaveBeenCalledOnce();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ msg: 'bus listener threw', event: 'tick' });
  });

  it('contains and logs a rejecting listener', async () => {
    const { bus, errors } = setup();
    const after = vi.fn();
    bus.on('tick', () => Promise.reject(new Error('async broke')));
    bus.on('tick', after);
    bus.emit('tick', { n: 2 });
    expect(after).toHaveBeenCalledOnce();
    await vi.waitFor(() => expect(errors).toHaveLength(1), PATIENT);
    expect(errors[0]).toMatchObject({ msg: 'bus listener rejected' });
  });

  it('keeps one listener subscribed twice until each of its unsubscriptions, and takes any string as a session', () => {
    const { bus } = setup();
    const heard: string[] = [];
    const listener = (e: { name: string }) => void heard.push(e.name);
    const first = bus.onSession('__proto__', listener);
    bus.onSession('__proto__', listener);
    bus.onSession('said', (e) => void heard.push(`wrong session ${e.name}`));
    bus.emit('said', { sessionId: '__proto__', text: 'a' });
    first();
    first();
    bus.emit('said', { sessionId: '__proto__', text: 'b' });
    expect(heard).toEqual(['said', 'said', 'said']);
  });

  it('unsubscribes, and counts listeners', () => {
    const { bus } = setup();
    const a = vi.fn();
    const off = bus.on('tick', a);
    expect(bus.listenerCount('tick')).toBe(1);
    off();
    bus.emit('tick', { n: 3 });
    expect(a).not.toHaveBeenCalled();
    expect(bus.listenerCount('tick')).toBe(0);
    const offs = [bus.on('tick', a), bus.onSession('s', a), bus.onAny(a)];
    expect(bus.listenerCount()).toBe(3);
    offs.forEach((o) => o());
    expect(bus.listenerCount()).toBe(0);
  });
});
