/**
 * What the inspector page shows (web/inspect/view.js), without a browser: the actor it opens on (the busy turn,
 * else a session, else a tool server's connection) and an actor's context without the functions its machine is
 * given. The page itself in Chromium: test/browser/inspector.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { actorToOpen, contextShown, type ViewedActor } from '../../web/inspect/view.js';

const actor = (machine: string, value: unknown, extra: Partial<ViewedActor> = {}): ViewedActor => ({
  parentId: undefined,
  definition: { id: machine },
  snapshot: { value },
  stopped: false,
  ...extra,
});
const mcp = actor('mcpServer', 'connected');
const idle = actor('session', 'idle');
const busy = actor('session', 'busy');
const turn = (value: string, stopped = false) => actor('turn', value, { parentId: 's2', stopped });

describe('the actor the inspector opens on', () => {
  it('is the busy turn, the newest when several run, whatever came first', () => {
    const actors = new Map([
      ['m', mcp],
      ['s1', idle],
      ['s2', busy],
      ['t1', turn('awaitingUser')],
      ['t2', turn('thinking')],
    ]);
    expect(actorToOpen(actors, undefined)).toBe('t2');
    expect(actorToOpen(actors, 'm')).toBe('t2');
  });

  it('is a session when no turn runs (a busy one first), never a tool server while a session lives', () => {
    expect(
      actorToOpen(
        new Map([
          ['m', mcp],
          ['s1', idle],
        ]),
        'm',
      ),
    ).toBe('s1');
    expect(
      actorToOpen(
        new Map([
          ['m', mcp],
          ['s2', busy],
          ['s1', idle],
        ]),
        undefined,
      ),
    ).toBe('s2');
  });

  it('keeps a finished turn or a session it shows; falls back to the first actor without a parent', () => {
    const finished = new Map([
      ['m', mcp],
      ['s2', idle],
      ['t1', turn('responding', true)],
    ]);
    expect(actorToOpen(finished, 't1')).toBe('t1');
    expect(
      actorToOpen(
        new Map([
          ['m', mcp],
          ['s1', idle],
          ['s2', idle],
        ]),
        's1',
      ),
    ).toBe('s1');
    expect(actorToOpen(new Map([['m', mcp]]), undefined)).toBe('m');
    expect(actorToOpen(new Map(), 'gone')).toBeUndefined();
  });
});

describe("an actor's context as shown", () => {
  it("leaves out the functions its machine is given (a tool server's now and random) and names them", () => {
    const context = {
      attempt: 0,
      failures: [],
      now: { type: 'now' },
      random: { type: 'random' },
      retry: { baseDelayMs: 1000, maxFailures: 5 },
      serverId: 'echo',
    };
    expect(contextShown({ context })).toEqual({
      shown: { attempt: 0, failures: [], retry: { baseDelayMs: 1000, maxFailures: 5 }, serverId: 'echo' },
      hidden: ['now', 'random'],
    });
  });

  it('shows a context without functions whole, and an input when there is no context', () => {
    const context = { iteration: 1, compaction: { done: false }, key: { sessionId: 's', turnId: 't' } };
    expect(contextShown({ context })).toEqual({ shown: context, hidden: [] });
    expect(contextShown({ input: { calls: [] } })).toEqual({ shown: { calls: [] }, hidden: [] });
    expect(contextShown(undefined)).toEqual({ shown: {}, hidden: [] });
  });
});
