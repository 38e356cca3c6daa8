import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Envelope } from '../../src/bus/index.ts';
import { createForwarding } from '../../src/cluster/forwarding.ts';
import { inboxMessage, readWire, toolServerChange, WIRE_PREFIX_CHARS, wireEvent } from '../../src/cluster/wire.ts';
import type { ClusterMedium } from '../../src/cluster/medium.ts';
import { createLogger } from '../../src/log/index.ts';

/** A logger whose lines are kept (parsed). */
function capturedLog() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { log: createLogger('info', stream), lines };
}
const flushed = () => new Promise((resolve) => setImmediate(resolve));

describe('cluster wire', () => {
  it('accepts the messages instances send (a reply without result: the handler resolved with nothing)', () => {
    const { log, lines } = capturedLog();
    const command = {
      kind: 'command',
      id: 'c1',
      from: 'a',
      hops: 1,
      name: 'agent.reset',
      payload: { sessionId: 's', extra: 1 },
      correlationId: 'k',
      sessionId: 's',
    };
    expect(readWire(inboxMessage, JSON.stringify(command), 'inbox', log)).toEqual(command);
    expect(readWire(inboxMessage, JSON.stringify({ kind: 'reply', id: 'c1', ok: true }), 'inbox', log)).toEqual({
      kind: 'reply',
      id: 'c1',
      ok: true,
    });
    const failed = {
      kind: 'reply',
      id: 'c1',
      ok: false,
      error: { code: 'AGENT_ERROR', message: 'm', details: { reason: 'x' } },
    };
    expect(readWire(inboxMessage, JSON.stringify(failed), 'inbox', log)).toEqual(failed);
    expect(
      readWire(
        wireEvent,
        JSON.stringify({ from: 'a', name: 'agent.chunk', payload: { content: 'x' }, correlationId: 'k' }),
        'live',
        log,
      ),
    ).toBeDefined();
    expect(
      readWire(
        toolServerChange,
        JSON.stringify({ op: 'connect', name: 'n', config: { command: 'x' } }),
        'changes',
        log,
      ),
    ).toBeDefined();
    expect(lines).toEqual([]);
  });

  it.each([
    ['not JSON', '{"kind":"command",', 'not JSON'],
    ['an unknown kind', JSON.stringify({ kind: 'gossip' }), 'kind'],
    [
      'a command without a session',
      JSON.stringify({
        kind: 'command',
        id: 'c',
        from: 'a',
        hops: 0,
        name: 'agent.reset',
        payload: {},
        correlationId: 'k',
      }),
      'payload.sessionId',
    ],
    [
      'a reply with a code outside the table',
      JSON.stringify({ kind: 'reply', id: 'c', ok: false, error: { code: 'NOPE', message: 'm', details: {} } }),
      'error.code',
    ],
    ['a JSON scalar', '42', '(message)'],
  ])('drops %s with a warning naming the channel, never throwing', (_what, raw, reason) => {
    const { log, lines } = capturedLog();
    expect(readWire(inboxMessage, raw, 'agentd:inst:me', log)).toBeUndefined();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 40,
      channel: 'agentd:inst:me',
      msg: 'cluster: dropped an invalid message',
    });
    expect(String(lines[0]?.reason)).toContain(reason);
  });

  it('logs at most a bounded prefix of an invalid message', () => {
    const { log, lines } = capturedLog();
    const raw = JSON.stringify({ kind: 'command', secret: 'x'.repeat(10_000) });
    readWire(inboxMessage, raw, 'inbox', log);
    expect(String(lines[0]?.prefix)).toBe(raw.slice(0, WIRE_PREFIX_CHARS));
    expect(JSON.stringify(lines[0]).length).toBeLessThan(1000);
  });
});

describe('the inbox (forwarding)', () => {
  /**
   * This instance is `me`; `owners` answers the lease's holder in turn (its last answer from then on), and
   * `delivered` is how the fake Redis answers a PUBLISH (default: one receiver, at once).
   */
  function rig(owners = ['me'], delivered?: (channel: string, message: string) => Promise<number>) {
    const { log, lines } = capturedLog();
    const published: { channel: string; message: unknown }[] = [];
    const medium = {
      publish: (channel: string, message: string) => {
        published.push({ channel, message: JSON.parse(message) });
        return delivered ? delivered(channel, message) : Promise.resolve(1);
      },
    } as unknown as ClusterMedium;
    let asked = 0;
    const leases = {
      owner: () => Promise.resolve(owners[Math.min(asked++, owners.length - 1)] ?? 'me'),
      release: () => Promise.resolve(),
    };
    let n = 0;
    const forwarding = createForwarding({
      medium,
      keyPrefix: 'agentd:',
      instanceId: 'me',
      leaseMs: 1000,
      leases,
      holds: () => true,
      releaseIfDormant: () => Promise.resolve(false),
      turnCommand: 'agent.sendMessage',
      clock: { now: () => 0 },
      ids: () => `id-${++n}`,
      log,
    });
    return { forwarding, published, lines };
  }

  it('drops a malformed message fed to its subscriber callback, and keeps serving', async () => {
    const { forwarding, published, lines } = rig();
    const ran: Envelope[] = [];
    forwarding.handleHere('agent.reset', (command) => {
      ran.push(command);
      return { seq: 3 };
    });
    expect(() => forwarding.onInbox('not json at all')).not.toThrow();
    expect(() => forwarding.onInbox(JSON.stringify({ kind: 'reply', id: 'x' }))).not.toThrow();
    expect(lines.map((l) => l.channel)).toEqual(['agentd:inst:me', 'agentd:inst:me']);
    expect(published).toEqual([]);

    forwarding.onInbox(
      JSON.stringify({
        kind: 'command',
        id: 'c1',
        from: 'other',
        hops: 1,
        name: 'agent.reset',
        payload: { sessionId: 's' },
        correlationId: 'k',
        sessionId: 's',
      }),
    );
    await flushed();
    expect(ran).toMatchObject([
      { id: 'c1', name: 'agent.reset', correlationId: 'k', sessionId: 's', payload: { sessionId: 's' } },
    ]);
    expect(published).toEqual([
      { channel: 'agentd:inst:other', message: { kind: 'reply', id: 'c1', ok: true, result: { seq: 3 } } },
    ]);
  });

  it("takes an owner's answer that arrives before its PUBLISH is acknowledged, a refusal too, without an unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      // Redis answers on two connections: the holder's reply (it handed the session over) reaches the subscriber
      // before the publishing connection hears how many received the command.
      const { forwarding } = rig(['other', 'me'], (channel, raw) => {
        const command = JSON.parse(raw) as { kind: string; id: string };
        if (channel !== 'agentd:inst:other' || command.kind !== 'command') return Promise.resolve(1);
        forwarding.onInbox(
          JSON.stringify({
            kind: 'reply',
            id: command.id,
            ok: false,
            error: {
              code: 'SERVICE_UNAVAILABLE',
              message: 'The session was handed over',
              details: { reason: 'handed_over' },
            },
          }),
        );
        return new Promise((resolve) => setImmediate(() => setImmediate(() => resolve(1))));
      });
      forwarding.handleHere('agent.sendMessage', () => ({ ran: 'here' }));
      const command: Envelope = {
        id: 'c1',
        ts: 0,
        correlationId: 'k',
        name: 'agent.sendMessage',
        payload: { sessionId: 's' },
        sessionId: 's',
      };
      await expect(forwarding.run(command, 0)).resolves.toEqual({ ran: 'here' });
      await flushed();
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
