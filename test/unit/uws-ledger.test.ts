/**
 * The uWebSockets.js engine's connection ledger (src/http/engine/uws-ledger.ts): uWS tells a
 * connection's opening with its peer but its closing without; the ledger keeps each peer's count
 * of open HTTP connections from what the requests show, never below the truth.
 */
import { describe, expect, it } from 'vitest';
import { ConnectionLedger } from '../../src/http/engine/uws-ledger.ts';

const WAIT_MS = 15_000;

function setup(max = 10) {
  const open = new Map<string, number>();
  let now = 0;
  const queued: Array<() => void> = [];
  const ledger = new ConnectionLedger({
    gate: {
      open: (a) => {
        const n = open.get(a) ?? 0;
        if (n >= max) return false;
        open.set(a, n + 1);
        return true;
      },
      close: (a) => open.set(a, (open.get(a) ?? 0) - 1),
    },
    waitMs: WAIT_MS,
    now: () => now,
    later: (fn) => queued.push(fn),
  });
  return {
    ledger,
    count: (a: string) => open.get(a) ?? 0,
    /** The end of the loop's turn: what `setImmediate` would run. */
    settle: () => queued.splice(0).forEach((fn) => fn()),
    advance: (ms: number) => (now += ms),
  };
}

describe('the uWS connection ledger', () => {
  it('counts a connection from its opening; a request on it and its response keep it counted while it waits', () => {
    const { ledger, count } = setup();
    expect(ledger.opened('10.0.0.1')).toBe(true);
    const request = ledger.requestStarted('10.0.0.1');
    ledger.requestEnded(request, false);
    expect(count('10.0.0.1')).toBe(1);
  });

  it('refuses a peer past its cap, and admits it again once one of its connections closed', () => {
    const { ledger, settle } = setup(2);
    expect([ledger.opened('10.0.0.1'), ledger.opened('10.0.0.1'), ledger.opened('10.0.0.1')]).toEqual([
      true,
      true,
      false,
    ]);
    ledger.closed(); // a waiting one, and only 10.0.0.1 has any
    settle();
    expect(ledger.opened('10.0.0.1')).toBe(true);
  });

  it('does not take the later close of a refused connection (answered 429 first) for a counted one', () => {
    const { ledger, count, settle } = setup(1);
    expect([ledger.opened('10.0.0.1'), ledger.opened('10.0.0.1')]).toEqual([true, false]);
    ledger.refusedClosing(); // the refused one is answered; uWS reports its close later
    ledger.closed();
    settle();
    expect(count('10.0.0.1')).toBe(1);
  });

  it("gives a close that is followed by a request's abort to that request's peer", () => {
    const { ledger, count, settle } = setup();
    ledger.opened('10.0.0.1');
    ledger.opened('10.0.0.2');
    const request = ledger.requestStarted('10.0.0.2');
    ledger.closed();
    ledger.requestAborted(request);
    settle();
    expect([count('10.0.0.1'), count('10.0.0.2')]).toEqual([1, 0]);
  });

  it('ends a connection whose response closes it (Connection: close) whenever uWS reports the close', () => {
    const { ledger, count, settle } = setup();
    ledger.opened('10.0.0.1');
    ledger.opened('10.0.0.2');
    const request = ledger.requestStarted('10.0.0.2');
    ledger.requestEnded(request, true);
    expect(count('10.0.0.2')).toBe(0);
    ledger.closed(); // the closing connection's, unnamed: it must not be taken for 10.0.0.1's
    settle();
    expect(count('10.0.0.1')).toBe(1);
  });

  it('gives a waiting connection back to its peer when the peer was the only one waiting as it closed', () => {
    const { ledger, count, settle } = setup();
    ledger.opened('10.0.0.1');
    ledger.closed();
    ledger.opened('10.0.0.2'); // in the same turn of the loop, after the close
    settle();
    expect([count('10.0.0.1'), count('10.0.0.2')]).toEqual([0, 1]);
  });

  it('keeps an unattributable close counted until the deadline by which uWS has closed the connection', () => {
    const { ledger, count, settle, advance } = setup();
    ledger.opened('10.0.0.1');
    ledger.opened('10.0.0.2');
    ledger.closed(); // one of the two, nobody can tell which
    settle();
    expect([count('10.0.0.1'), count('10.0.0.2')]).toEqual([1, 1]);
    advance(WAIT_MS);
    ledger.opened('10.0.0.3'); // the next event after the deadline ends both entries
    expect([count('10.0.0.1'), count('10.0.0.2')]).toEqual([0, 0]);
  });

  it('a request renews its connection: after its response, it counts until a full wait from then', () => {
    const { ledger, count, advance } = setup();
    ledger.opened('10.0.0.1');
    advance(WAIT_MS - 1000);
    ledger.requestEnded(ledger.requestStarted('10.0.0.1'), false);
    advance(2000);
    ledger.opened('10.0.0.2');
    expect(count('10.0.0.1')).toBe(1);
  });

  it('a connection that becomes a WebSocket leaves the count at once (uWS reports no close for it)', () => {
    const { ledger, count } = setup();
    ledger.opened('10.0.0.1');
    ledger.upgraded(ledger.requestStarted('10.0.0.1'));
    expect(count('10.0.0.1')).toBe(0);
    ledger.closed(); // some other connection's close: not this one's again
    expect(count('10.0.0.1')).toBe(0);
  });
});
