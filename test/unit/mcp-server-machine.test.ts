import { describe, expect, it } from 'vitest';
import { SimulatedClock, createActor, fromPromise } from 'xstate';
import {
  DEFAULT_RETRY_POLICY,
  retryDelayOf,
  mcpServerMachine,
  type McpServerEmitted,
  type RetryPolicy,
} from '../../machines/mcp-server.machine.ts';

/** A connect actor whose outcome each attempt is decided by the test. */
function scriptedConnect() {
  const attempts: { resolve: () => void; reject: (e: Error) => void; signal: AbortSignal }[] = [];
  const actor = fromPromise<void, { serverId: string }>(
    ({ signal }) =>
      new Promise<void>((resolve, reject) => {
        attempts.push({ resolve, reject, signal });
      }),
  );
  return { actor, attempts };
}

const flush = () => new Promise((r) => setTimeout(r, 0));

function start(retry: Partial<RetryPolicy> = {}, random = () => 0.5) {
  const clock = new SimulatedClock();
  const connect = scriptedConnect();
  let closed = 0;
  const machine = mcpServerMachine.provide({
    actors: { connect: connect.actor },
    actions: { closeConnection: () => void closed++ },
  });
  const actor = createActor(machine, {
    clock,
    input: { serverId: 's1', retry, now: () => clock.now(), random },
  });
  const statuses: McpServerEmitted[] = [];
  actor.on('status', (e) => statuses.push(e));
  actor.start();
  return { actor, clock, connect, statuses, closed: () => closed };
}

const value = (a: { getSnapshot(): { value: unknown } }) => a.getSnapshot().value;

describe('retryDelayOf (the shared backoff with the MCP policy)', () => {
  it('doubles from the base to the cap, with jitter inside the ratio', () => {
    const mid = () => 0.5;
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((n) => retryDelayOf(n, DEFAULT_RETRY_POLICY, mid))).toEqual([
      1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000,
    ]);
    expect(retryDelayOf(0, DEFAULT_RETRY_POLICY, () => 0)).toBe(800);
    expect(retryDelayOf(0, DEFAULT_RETRY_POLICY, () => 0.999999)).toBe(1200);
    expect(retryDelayOf(10, DEFAULT_RETRY_POLICY, () => 0.999999)).toBe(60000);
    expect(retryDelayOf(1000, DEFAULT_RETRY_POLICY, () => 0.5)).toBe(60000);
  });
});

describe('mcp server machine', () => {
  it('connects and emits connecting then connected', async () => {
    const t = start();
    expect(value(t.actor)).toBe('connecting');
    t.connect.attempts[0]!.resolve();
    await flush();
    expect(value(t.actor)).toBe('connected');
    expect(t.statuses).toEqual([
      { type: 'status', status: 'connecting' },
      { type: 'status', status: 'connected' },
    ]);
  });

  it('retries a failed connection after the jittered backoff', async () => {
    const t = start({}, () => 0); // factor 0.8
    t.connect.attempts[0]!.reject(new Error('spawn ENOENT'));
    await flush();
    expect(value(t.actor)).toEqual({ error: 'backoff' });
    expect(t.statuses.at(-1)).toEqual({ type: 'status', status: 'error', error: 'spawn ENOENT' });
    t.clock.increment(799);
    expect(t.connect.attempts).toHaveLength(1);
    t.clock.increment(1);
    expect(value(t.actor)).toBe('connecting');
    expect(t.connect.attempts).toHaveLength(2);
    // second failure waits twice as long
    t.connect.attempts[1]!.reject(new Error('again'));
    await flush();
    t.clock.increment(1599);
    expect(t.connect.attempts).toHaveLength(2);
    t.clock.increment(1);
    expect(t.connect.attempts).toHaveLength(3);
    t.connect.attempts[2]!.resolve();
    await flush();
    expect(value(t.actor)).toBe('connected');
    expect(t.actor.getSnapshot().context.attempt).toBe(0);
    expect(t.actor.getSnapshot().context.error).toBeUndefined();
  });

  it('moves to error with the reason on a crash, closes the connection, and reconnects', async () => {
    const t = start();
    t.connect.attempts[0]!.resolve();
    await flush();
    t.actor.send({ type: 'CONNECTION_LOST', reason: 'process exited (signal SIGKILL)' });
    expect(value(t.actor)).toEqual({ error: 'backoff' });
    expect(t.closed()).toBe(1);
    expect(t.statuses.at(-1)).toEqual({ type: 'status', status: 'error', error: 'process exited (signal SIGKILL)' });
    t.clock.increment(1000);
    expect(value(t.actor)).toBe('connecting');
    t.connect.attempts[1]!.resolve();
    await flush();
    expect(t.statuses.map((s) => s.status)).toEqual(['connecting', 'connected', 'error', 'connecting', 'connected']);
  });

  it('stops retrying after maxFailures within the window and waits for RESTART', async () => {
    const t = start({ maxFailures: 3, windowMs: 60_000 });
    for (let i = 0; i < 2; i++) {
      t.connect.attempts[i]!.reject(new Error(`fail ${i}`));
      await flush();
      expect(value(t.actor)).toEqual({ error: 'backoff' });
      t.clock.increment(10_000);
    }
    t.connect.attempts[2]!.reject(new Error('fail 2'));
    await flush();
    expect(value(t.actor)).toEqual({ error: 'halted' });
    expect(t.statuses.at(-1)?.error).toMatch(/^fail 2 \(stopped retrying after 3 failures within 60 s/);
    t.clock.increment(10 * 60_000);
    expect(t.connect.attempts).toHaveLength(3);

    t.actor.send({ type: 'RESTART' });
    expect(value(t.actor)).toBe('connecting');
    expect(t.actor.getSnapshot().context.failures).toEqual([]);
    t.connect.attempts[3]!.resolve();
    await flush();
    expect(value(t.actor)).toBe('connected');
  });

  it('keeps retrying when failures are spread beyond the window', async () => {
    const t = start({ maxFailures: 2, windowMs: 1_000, baseDelayMs: 1_000, jitterRatio: 0 });
    for (let i = 0; i < 4; i++) {
      t.connect.attempts[i]!.reject(new Error('x'));
      await flush();
      expect(value(t.actor)).toEqual({ error: 'backoff' });
      t.clock.increment(60_000);
    }
    expect(t.connect.attempts).toHaveLength(5);
  });

  it('counts crashes after connecting towards the budget', async () => {
    const t = start({ maxFailures: 2 });
    t.connect.attempts[0]!.resolve();
    await flush();
    t.actor.send({ type: 'CONNECTION_LOST', reason: 'crash 1' });
    t.clock.increment(1_000);
    t.connect.attempts[1]!.resolve();
    await flush();
    t.actor.send({ type: 'CONNECTION_LOST', reason: 'crash 2' });
    expect(value(t.actor)).toEqual({ error: 'halted' });
  });

  it('RESTART while connected closes the connection and reconnects', async () => {
    const t = start();
    t.connect.attempts[0]!.resolve();
    await flush();
    t.actor.send({ type: 'RESTART' });
    expect(t.closed()).toBe(1);
    expect(value(t.actor)).toBe('connecting');
    expect(t.connect.attempts).toHaveLength(2);
  });

  it('RESTART while connecting keeps the current attempt', () => {
    const t = start();
    t.actor.send({ type: 'RESTART' });
    expect(value(t.actor)).toBe('connecting');
    expect(t.connect.attempts).toHaveLength(1);
  });

  it('STOP during connecting aborts the attempt and ends disconnected', () => {
    const t = start();
    t.actor.send({ type: 'STOP' });
    expect(value(t.actor)).toBe('disconnected');
    expect(t.actor.getSnapshot().status).toBe('done');
    expect(t.connect.attempts[0]!.signal.aborted).toBe(true);
    expect(t.statuses.at(-1)).toEqual({ type: 'status', status: 'disconnected' });
  });

  it('STOP while connected closes the connection; STOP during backoff cancels the retry', async () => {
    const a = start();
    a.connect.attempts[0]!.resolve();
    await flush();
    a.actor.send({ type: 'STOP' });
    expect(a.closed()).toBe(1);
    expect(value(a.actor)).toBe('disconnected');

    const b = start();
    b.connect.attempts[0]!.reject(new Error('x'));
    await flush();
    b.actor.send({ type: 'STOP' });
    b.clock.increment(120_000);
    expect(b.connect.attempts).toHaveLength(1);
    expect(value(b.actor)).toBe('disconnected');
  });

  it('ignores a stale CONNECTION_LOST outside connected', async () => {
    const t = start();
    t.connect.attempts[0]!.reject(new Error('x'));
    await flush();
    const before = t.statuses.length;
    t.actor.send({ type: 'CONNECTION_LOST', reason: 'late' });
    expect(t.statuses).toHaveLength(before);
    expect(t.actor.getSnapshot().context.error).toBe('x');
  });

  it('an attempt that reached agentd itself halts at once (no retry can change that) with its reason', async () => {
    const t = start();
    t.connect.attempts[0]!.reject(
      Object.assign(new Error('"myself" is this agentd\'s own /mcp endpoint'), { name: 'SelfConnection' }),
    );
    await flush();
    expect(value(t.actor)).toEqual({ error: 'halted' });
    expect(t.statuses.at(-1)).toEqual({
      type: 'status',
      status: 'error',
      error: '"myself" is this agentd\'s own /mcp endpoint',
    });
    t.clock.increment(600_000);
    expect(t.connect.attempts).toHaveLength(1);
  });

  it('an attempt needing an OAuth sign-in halts at once (no retries) with its reason; RESTART (the callback) connects', async () => {
    const t = start();
    const needsSignIn = Object.assign(new Error('authorization required: an admin signs in'), {
      name: 'AuthorizationRequired',
    });
    t.connect.attempts[0]!.reject(needsSignIn);
    await flush();
    expect(value(t.actor)).toEqual({ error: 'halted' });
    expect(t.statuses.at(-1)).toEqual({
      type: 'status',
      status: 'error',
      error: 'authorization required: an admin signs in',
    });
    t.clock.increment(600_000);
    expect(t.connect.attempts).toHaveLength(1);
    t.actor.send({ type: 'RESTART' });
    t.connect.attempts[1]!.resolve();
    await flush();
    expect(value(t.actor)).toBe('connected');
  });
});
