/**
 * `rejoin` of src/agent/turn-waiter.ts: a turn asked elsewhere is adopted from its session's log and its live
 * frames, without losing a frame that arrives while the log is read.
 */
import { describe, expect, it } from 'vitest';
import { sessionKey } from '../../src/session-id.ts';
import { createTurnWaiter, type AgentCommands, type AgentEvents, type AgentFrame } from '../../src/agent/index.ts';
import { createBus } from '../../src/bus/index.ts';
import { createLogger } from '../../src/log/index.ts';

const turn = { correlationId: 'corr-1', sessionId: sessionKey(undefined, 's'), turnId: 't1' };
const asked = (callId: string, seq: number) => ({ sessionId: 's', turnId: 't1', seq, callId, toolName: 'echo', serverId: 'echo', args: {}, expiresAt: '2099-01-01T00:00:00.000Z' });
const frame = (event: string, data: object) => ({ event, data }) as AgentFrame;

/** A bus whose `agent.history` answers `frames` once `release()` is called; the watches asked for. */
function setup(frames: AgentFrame[], lastSeq: number) {
  const bus = createBus<AgentCommands, AgentEvents>({ log: createLogger('silent') });
  let release = () => {};
  const read = new Promise<void>((resolve) => (release = resolve));
  let reading = false;
  bus.handle('agent.history', async () => {
    reading = true;
    await read;
    return { frames, lastSeq };
  });
  const watches: string[] = [];
  const waiter = createTurnWaiter(bus, 60_000, { watch: (id) => (watches.push(`+${id}`), Promise.resolve()), unwatch: (id) => void watches.push(`-${id}`) });
  return { bus, waiter, watches, release: () => release(), reading: () => reading };
}

describe('rejoining a turn asked elsewhere', () => {
  it('given a turn that ends live while the log is read, its end is not lost', async () => {
    const { bus, waiter, release, reading } = setup([frame('toolApprovalRequested', asked('c1', 5))], 5);
    const joining = waiter.rejoin(turn);
    await expect.poll(reading).toBe(true);
    bus.emit('agent.response', { sessionId: 's', turnId: 't1', seq: 7, content: 'meanwhile', model: 'm' }, { correlationId: 'corr-1' });
    release();
    const { reply } = await joining;
    expect((await reply).content).toBe('meanwhile');
    expect(waiter.turnOf('corr-1')).toBeUndefined(); // ended: nothing waits
  });

  it('given a turn the log shows ended, the reply answers at once and the watch is given back', async () => {
    const { waiter, watches, release } = setup([frame('userMessage', { sessionId: 's', turnId: 't1', seq: 1, content: 'hi', hasImage: false }), frame('response', { sessionId: 's', turnId: 't1', seq: 2, content: 'done', model: 'm' })], 2);
    release();
    const { reply } = await waiter.rejoin(turn);
    expect((await reply).content).toBe('done');
    await expect.poll(() => watches).toEqual(['+s', '-s']);
  });

  it('given a turn that ends live after the log was read, the reply comes from its live end, matched by turn id', async () => {
    const { bus, waiter, release } = setup([frame('toolApprovalRequested', asked('c1', 5))], 5);
    release();
    const { reply } = await waiter.rejoin(turn);
    bus.emit('agent.response', { sessionId: 's', turnId: 't1', seq: 9, content: 'later', model: 'm' }, { correlationId: 'another-correlation' });
    expect((await reply).content).toBe('later');
  });

  it('given a turn the log does not know, or no turn id, the reply fails as unknown_turn', async () => {
    const { waiter, release } = setup([], 0);
    release();
    await expect((await waiter.rejoin(turn)).reply).rejects.toMatchObject({ details: { reason: 'unknown_turn' } });
    await expect((await waiter.rejoin({ correlationId: 'corr-2', sessionId: sessionKey(undefined, 's') })).reply).rejects.toMatchObject({ details: { reason: 'unknown_turn' } });
  });

  it('given a second retry while the first adopts the turn, both follow the same reply', async () => {
    const { bus, waiter, release } = setup([frame('toolApprovalRequested', asked('c1', 5))], 5);
    const first = waiter.rejoin(turn);
    const second = waiter.rejoin(turn);
    release();
    const [a, b] = await Promise.all([first, second]);
    expect(a.reply).toBe(b.reply);
    bus.emit('agent.response', { sessionId: 's', turnId: 't1', seq: 9, content: 'once', model: 'm' }, { correlationId: 'corr-1' });
    expect((await b.reply).content).toBe('once');
  });
});
