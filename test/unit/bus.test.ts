import { describe, expect, it, vi } from 'vitest';
import { pino } from 'pino';
import { createBus } from '../../src/bus/index.ts';
import { PATIENT } from '../support/wait.ts';

type Commands = {
  add: { payload: { a: number; b: number }; result: number };
  fail: { payload: Record<string, never>; result: void };
};
type Events = { tick: { n: number }; other: { s: string } };

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

  it('gives the handler an envelope with id, timestamp, correlation id and session', async () => {
    const { bus } = setup();
    const seen = vi.fn();
    bus.handle('add', (env) => {
      seen(env);
      return 0;
    });
    await bus.execute('add', { a: 1, b: 2 }, { sessionId: 's1' });
    await bus.execute('add', { a: 1, b: 2 }, { correlationId: 'corr-9' });
    expect(seen.mock.calls[0]![0]).toEqual({
      id: 'id1',
      ts: 1000,
      correlationId: 'id1',
      sessionId: 's1',
      name: 'add',
      payload: { a: 1, b: 2 },
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
    const env = bus.emit('tick', { n: 1 }, { sessionId: 'x', correlationId: 'c' });
    expect(a).toHaveBeenCalledWith(env);
    expect(b).toHaveBeenCalledWith(env);
    expect(any).toHaveBeenCalledWith(env);
    expect(other).not.toHaveBeenCalled();
    expect(env).toMatchObject({ name: 'tick', payload: { n: 1 }, sessionId: 'x', correlationId: 'c' });
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

  it('unsubscribes, and counts listeners', () => {
    const { bus } = setup();
    const a = vi.fn();
    const off = bus.on('tick', a);
    expect(bus.listenerCount('tick')).toBe(1);
    off();
    bus.emit('tick', { n: 3 });
    expect(a).not.toHaveBeenCalled();
    expect(bus.listenerCount('tick')).toBe(0);
  });
});
