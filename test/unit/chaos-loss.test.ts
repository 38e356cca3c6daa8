/**
 * The chaos checker's part for lossy faults (tools/chaos/check-loss.ts), over journals written by hand: a Redis wiped
 * under one session. Acknowledged turns it lost are expected; a client told the new store identity makes them "lost
 * and noticed" (no violation), a store identity kept makes them "lost silently" and the seqs given again to other
 * events "seqReused"; a `message-sync` left waiting long after the fault is "callerLeftWaiting".
 */
import { describe, expect, it } from 'vitest';
import { CALLER_BOUND_MS } from '../../tools/chaos/check-loss.ts';
import { check } from '../../tools/chaos/checker.ts';
import type { Frame, LogLine, Recorded, WsView } from '../../tools/chaos/recorded.ts';

const WIPED_AT = 3000;

/** A turn's two events from `seq`: its message and its reply. */
const turn = (turnId: string, seq: number): LogLine[] => [
  { seq, event: { type: 'userMessage', turnId, content: `hello ${turnId}` } },
  { seq: seq + 1, event: { type: 'response', turnId } },
];
const framesOf = (log: LogLine[]): Frame[] =>
  log.map((l) => ({ event: l.event.type, data: { seq: l.seq, turnId: l.event.turnId! } }));
const seen = (log: LogLine[], storeId: string): WsView['frames'] =>
  log.map((l) => ({ event: l.event.type, seq: l.seq, turnId: l.event.turnId!, storeId }));

/**
 * t1 and t2 acknowledged, then Redis wiped (at WIPED_AT): the final log holds only t3, numbered from 1 again. The
 * WebSocket client saw t3 under `after` (a new store identity, or the old one when agentd did not notice).
 */
function wiped(after: 'A' | 'B'): Recorded {
  const final = turn('t3', 1);
  return {
    sessions: [{ id: 's1', log: final, history: framesOf(final) }],
    acked: [
      { sessionId: 's1', turnId: 't1', via: 'sync', at: 1000 },
      { sessionId: 's1', turnId: 't2', via: 'ws', at: 2000 },
      { sessionId: 's1', turnId: 't3', via: 'message', at: 5000 },
    ],
    ws: [
      {
        client: 'ws-1',
        sessionId: 's1',
        from: 0,
        frames: [...seen([...turn('t1', 1), ...turn('t2', 3)], 'A'), ...seen(final, after)],
      },
    ],
    stores: [
      { client: 'ws-1', at: 0, storeId: 'A', via: 'hello' },
      ...(after === 'B' ? [{ client: 'ws-1', at: 3500, storeId: 'B', via: 'hello' as const }] : []),
    ],
    lossyFaults: [{ kind: 'redisWipe', at: WIPED_AT }],
    syncs: [{ sessionId: 's1', turnId: 't1', sentAt: 500, answeredAt: 1000, status: 200 }],
    markerLines: [],
    schedules: [],
    webhooksOn: false,
    webhooks: [],
    a2aTasks: [],
    pushes: [],
    mcpTasks: [],
  };
}

const counted = (r: Recorded) => Object.fromEntries(Object.entries(check(r).violations).filter(([, n]) => n !== 0));

describe('the chaos checker, lossy faults', () => {
  it('counts acknowledged turns lost and noticed (a new storeId told) as lost, not as violations', () => {
    const result = check(wiped('B'));
    expect(counted(wiped('B'))).toEqual({});
    expect(result.lost).toEqual({ acknowledged: 2, noticed: 2, silently: 0, byFault: { redisWipe: 2 } });
  });

  it('counts a loss under a store identity kept as lost silently, and each seq given to another event', () => {
    const result = check(wiped('A'));
    expect(counted(wiped('A'))).toEqual({ lostSilently: 2, seqReused: 2 });
    expect(result.lost).toMatchObject({ acknowledged: 2, noticed: 0, silently: 2 });
    expect(result.examples.seqReused).toEqual([
      'A s1 seq 1: userMessage t1 / userMessage t3',
      'A s1 seq 2: response t1 / response t3',
    ]);
  });

  it('counts a message-sync in flight at the fault and answered past the bound as a caller left waiting', () => {
    const r = wiped('B');
    r.syncs!.push({ sessionId: 's1', turnId: 'w1', sentAt: 2500, answeredAt: WIPED_AT + 2000, status: 503 });
    expect(counted(r)).toEqual({});
    r.syncs!.push({
      sessionId: 's1',
      turnId: 'w2',
      sentAt: 2500,
      answeredAt: WIPED_AT + CALLER_BOUND_MS + 1,
      status: 500,
    });
    expect(counted(r)).toEqual({ callerLeftWaiting: 1 });
  });

  it('without a lossy fault, a lost acknowledged turn stays ackedNotOneEnding', () => {
    const r = wiped('B');
    r.lossyFaults = [];
    expect(counted(r)).toEqual({ ackedNotOneEnding: 2 });
    expect(check(r).lost.acknowledged).toBe(0);
  });
});
