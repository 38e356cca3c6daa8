/**
 * The chaos run's checker (tools/chaos/checker.ts), over records written by hand: a clean run counts no violation,
 * and a run holding one instance of each kind counts exactly that one (and nothing else), so a summary's counts
 * mean what docs/chaos.md says they mean.
 */
import { describe, expect, it } from 'vitest';
import { check, VIOLATION_KINDS, type ViolationKind } from '../../tools/chaos/checker.ts';
import type { Frame, LogLine, Recorded, SessionRecord } from '../../tools/chaos/recorded.ts';

/** One finished turn's stored events from `seq` on, and its durable frames. */
function turn(turnId: string, seq: number, ending: 'response' | 'turnFailed' = 'response') {
  const log: LogLine[] = [
    { seq, event: { type: 'userMessage', turnId, content: `hello ${turnId}` } },
    { seq: seq + 1, event: { type: 'toolCall', turnId, callId: 'c1', toolName: 'mark', args: { key: turnId } } },
    { seq: seq + 2, event: { type: 'toolResult', turnId, callId: 'c1' } },
    { seq: seq + 3, event: { type: ending, turnId } },
  ];
  return log;
}

/** The durable frames of a log, as the history endpoint gives them. */
const framesOf = (log: LogLine[]): Frame[] =>
  log.map((l) => ({
    event: l.event.type === 'turnFailed' ? 'error' : l.event.type,
    data: { seq: l.seq, ...(l.event.turnId !== undefined && { turnId: l.event.turnId }) },
  }));

const session = (id: string, log: LogLine[]): SessionRecord => ({ id, log, history: framesOf(log) });

const webhookOf = (sessionId: string, l: LogLine) => ({
  id: `msg_${sessionId}_${l.seq}`,
  accepted: true,
  body: JSON.stringify({
    type: l.event.type === 'response' ? 'turn.completed' : 'turn.failed',
    timestamp: '2026-01-01T00:00:00.000Z',
    data: { sessionId, seq: l.seq, turnId: l.event.turnId },
  }),
});

/** One delivery of each turn ending of `sessions`. */
const hooksOf = (sessions: SessionRecord[]) =>
  sessions.flatMap((s) =>
    s.log.filter((l) => l.event.type === 'response' || l.event.type === 'turnFailed').map((l) => webhookOf(s.id, l)),
  );

/** A clean run: four sessions (one a schedule's, one an A2A context, one of MCP tasks), every kind of record present. */
function clean(): Recorded {
  const s1 = [...turn('t1', 1), ...turn('t2', 5, 'turnFailed')];
  const tick = [
    { seq: 1, event: { type: 'userMessage', turnId: 'sched-a', content: 'tick 2026-01-01T00:00:01.000Z' } },
    { seq: 2, event: { type: 'response', turnId: 'sched-a' } },
  ];
  const a2a = turn('a1', 1);
  const mcp = [...turn('m1', 1), ...turn('m2', 5, 'turnFailed')];
  const sessions = [session('s1', s1), session('schedule-tick', tick), session('ctx', a2a), session('mcp', mcp)];
  return {
    sessions,
    acked: [
      { sessionId: 's1', turnId: 't1', via: 'message' },
      { sessionId: 's1', turnId: 't2', via: 'ws' },
      { sessionId: 'ctx', turnId: 'a1', via: 'a2a' },
      { sessionId: 'mcp', turnId: 'm1', via: 'mcp' },
      { sessionId: 'mcp', turnId: 'm2', via: 'mcp' },
    ],
    ws: [
      {
        client: 'ws-1',
        sessionId: 's1',
        from: 0,
        frames: s1.map((l) => ({ event: framesOf([l])[0]!.event, seq: l.seq, turnId: l.event.turnId! })),
      },
    ],
    markerLines: ['t1', 't2', 'a1'],
    schedules: [
      {
        id: 'tick',
        sessionId: 'schedule-tick',
        runs: [
          { status: 'finished', plannedAt: '2026-01-01T00:00:01.000Z', session: 'schedule-tick', turnId: 'sched-a' },
        ],
      },
    ],
    webhooksOn: true,
    webhooks: hooksOf(sessions),
    a2aTasks: [{ taskId: 'ctx/a1', sessionId: 'ctx', turnId: 'a1' }],
    pushes: [
      { taskId: 'ctx/a1', state: 'TASK_STATE_WORKING' },
      { taskId: 'ctx/a1', state: 'TASK_STATE_COMPLETED' },
    ],
    // On the 2026-07-28 wire a failed turn reads `completed`, its result a tool error.
    mcpTasks: [
      { taskId: 'bWNw/m1', sessionId: 'mcp', turnId: 'm1', status: 'completed', isError: false },
      { taskId: 'bWNw/m2', sessionId: 'mcp', turnId: 'm2', status: 'completed', isError: true },
    ],
  };
}

/** The violations counted, without the zeros. */
const counted = (r: Recorded) =>
  Object.fromEntries(Object.entries(check(r).violations).filter(([, n]) => n !== 0)) as Partial<
    Record<ViolationKind, number>
  >;

describe('the chaos checker', () => {
  it('counts nothing in a clean run, and names every kind', () => {
    const result = check(clean());
    expect(Object.keys(result.violations).sort()).toEqual([...VIOLATION_KINDS].sort());
    expect(counted(clean())).toEqual({});
  });

  it('counts an acknowledged message whose turn never ended', () => {
    const r = clean();
    r.acked.push({ sessionId: 's1', turnId: 'lost', via: 'sync' });
    expect(counted(r)).toEqual({ ackedNotOneEnding: 1 });
  });

  it('counts a turn its log started (or queued) that never ended', () => {
    const r = clean();
    const s1 = r.sessions[0]!;
    s1.log.push({ seq: 9, event: { type: 'messageQueued', turnId: 'q1', content: 'queued' } });
    s1.history = framesOf(s1.log).filter((f) => f.event !== 'messageQueued');
    expect(counted(r)).toEqual({ turnNeverEnded: 1 });
    s1.log.push({ seq: 10, event: { type: 'userMessage', turnId: 'q1', content: 'queued' } });
    r.acked.push({ sessionId: 's1', turnId: 'q1', via: 'message' });
    expect(counted(r)).toEqual({ turnNeverEnded: 1, ackedNotOneEnding: 1 });
  });

  it('counts a turn with two endings (and the acknowledged message it answered)', () => {
    const r = clean();
    const s1 = r.sessions[0]!;
    s1.log.push({ seq: 9, event: { type: 'response', turnId: 't1' } });
    s1.history = framesOf(s1.log);
    r.webhooks.push(webhookOf('s1', s1.log[8]!));
    expect(counted(r)).toEqual({ turnTwoEndings: 1, ackedNotOneEnding: 1 });
  });

  it('counts a tool call with two results', () => {
    const r = clean();
    const s1 = r.sessions[0]!;
    s1.log.push({ seq: 9, event: { type: 'toolResult', turnId: 't2', callId: 'c1' } });
    s1.history = framesOf(s1.log);
    expect(counted(r)).toEqual({ callTwoResults: 1 });
  });

  it('counts a marker tool call that ran twice', () => {
    const r = clean();
    r.markerLines.push('t1');
    expect(counted(r)).toEqual({ markerRunTwice: 1 });
  });

  it('counts a gap and a repeat in a log', () => {
    const r = clean();
    r.sessions[1]!.log[1]!.seq = 3; // 1, 3: a gap
    r.sessions[2]!.log[2]!.seq = 2; // 1, 2, 2, 3: a repeat
    r.sessions[2]!.log[3]!.seq = 3;
    r.webhooks = hooksOf(r.sessions);
    expect(counted(r)).toEqual({ seqGap: 1, seqRepeat: 1 });
  });

  it('counts a durable frame a WebSocket client saw twice across a resume, and one it missed', () => {
    const twice = clean();
    const view = twice.ws[0]!;
    view.frames.splice(3, 0, { event: 'toolCall', seq: 2, turnId: 't1' }); // replayed again after a resume
    expect(counted(twice)).toEqual({ wsDuplicate: 1 });
    // A turn's transient `error` (its fact could not be stored) repeats the last durable seq: another turn's `error`.
    const transient = clean();
    transient.ws[0]!.frames.push({ event: 'error', seq: 8, turnId: 't3' });
    expect(counted(transient)).toEqual({});
    const missed = clean();
    missed.ws[0]!.frames.splice(5, 1); // toolCall seq 6 never arrived
    expect(counted(missed)).toEqual({ wsMissed: 1 });
  });

  it('does not count transient frames, nor frames before its first since or after the last it saw', () => {
    const r = clean();
    r.ws[0] = {
      client: 'ws-1',
      sessionId: 's1',
      from: 2,
      frames: [
        { event: 'thinking', seq: 3 },
        { event: 'thinking', seq: 3 },
        { event: 'chunk', seq: 3 },
        { event: 'toolResult', seq: 3 },
        { event: 'response', seq: 4 },
      ],
    };
    expect(counted(r)).toEqual({});
  });

  it('counts a schedule tick that fired twice, and one claimed that never fired', () => {
    const twice = clean();
    const tick = twice.sessions[1]!;
    tick.log.push(
      { seq: 3, event: { type: 'userMessage', turnId: 'sched-a2', content: 'tick 2026-01-01T00:00:01.000Z' } },
      { seq: 4, event: { type: 'response', turnId: 'sched-a2' } },
    );
    tick.history = framesOf(tick.log);
    twice.webhooks.push(webhookOf('schedule-tick', tick.log[3]!));
    expect(counted(twice)).toEqual({ scheduleTickTwice: 1 });

    const never = clean();
    never.schedules[0]!.runs.push(
      { status: 'claimed', plannedAt: '2026-01-01T00:00:02.000Z' },
      { status: 'sent', plannedAt: '2026-01-01T00:00:03.000Z', session: 'schedule-tick', turnId: 'sched-gone' },
    );
    expect(counted(never)).toEqual({ scheduleTickNeverFired: 2 });
  });

  it('counts a webhook id delivered with two payloads, and an ending never delivered', () => {
    const conflict = clean();
    const first = conflict.webhooks[0]!;
    conflict.webhooks.push({ ...first, body: first.body.replace('"t1"', '"t9"') });
    expect(counted(conflict)).toEqual({ webhookConflict: 1 });

    const resent = clean();
    const again = JSON.parse(resent.webhooks[0]!.body) as Record<string, unknown>;
    resent.webhooks.push({ ...resent.webhooks[0]!, body: JSON.stringify({ data: again['data'], ...again }) });
    expect(counted(resent)).toEqual({}); // the same payload again (keys in another order): at least once is allowed

    const refused = clean();
    refused.webhooks[0]!.accepted = false; // answered 503 and never sent again
    expect(counted(refused)).toEqual({ webhookMissing: 1 });

    const missing = clean();
    missing.webhooks.shift();
    expect(counted(missing)).toEqual({ webhookMissing: 1 });
    missing.webhooksOn = false;
    expect(counted(missing)).toEqual({});
  });

  it('counts an A2A task that ended without a push of its terminal state', () => {
    const r = clean();
    r.pushes = r.pushes.filter((p) => p.state !== 'TASK_STATE_COMPLETED');
    expect(counted(r)).toEqual({ pushMissing: 1 });
    const running = clean();
    running.a2aTasks.push({ taskId: 'ctx/a2', sessionId: 'ctx', turnId: 'a2' }); // never ended: nothing is owed yet
    expect(counted(running)).toEqual({});
  });

  describe('an MCP task read back by tasks/get', () => {
    it('counts nothing when its status agrees with its turn ending', () => {
      const r = clean();
      r.mcpTasks[1]!.status = 'failed'; // the 2025-11-25 wire's word for a failed turn agrees too
      expect(counted(r)).toEqual({});
    });

    it('counts a status that disagrees with the ending', () => {
      const wrong = clean();
      wrong.mcpTasks[0]!.status = 'working'; // the log holds its response
      expect(counted(wrong)).toEqual({ mcpTaskWrong: 1 });
      const notError = clean();
      notError.mcpTasks[1]!.isError = false; // the log holds a turnFailed, the task a plain result
      expect(counted(notError)).toEqual({ mcpTaskWrong: 1 });
      const errored = clean();
      errored.mcpTasks[0]!.isError = true; // the log holds a response, the task a tool error
      expect(counted(errored)).toEqual({ mcpTaskWrong: 1 });
    });

    it('wants a turn failed by a cancel or a reset to read cancelled', () => {
      const r = clean();
      const failedAt = r.sessions[3]!.log[7]!;
      failedAt.event['details'] = { reason: 'cancelled' };
      expect(counted(r)).toEqual({ mcpTaskWrong: 1 }); // still `completed` with isError
      r.mcpTasks[1] = { ...r.mcpTasks[1]!, status: 'cancelled', isError: false };
      expect(counted(r)).toEqual({});
      failedAt.event['details'] = { reason: 'reset' };
      expect(counted(r)).toEqual({});
    });

    it('counts a task whose turn has no ending, and a tasks/get that answered no status', () => {
      const open = clean();
      open.mcpTasks.push({ taskId: 'bWNw/m3', sessionId: 'mcp', turnId: 'm3', status: 'working', isError: false });
      expect(counted(open)).toEqual({ mcpTaskWrong: 1 });
      const failed = clean();
      failed.mcpTasks[0] = { taskId: 'bWNw/m1', sessionId: 'mcp', turnId: 'm1', error: '-32602 Unknown task' };
      expect(counted(failed)).toEqual({ mcpTaskWrong: 1 });
      expect(check(failed).examples.mcpTaskWrong).toEqual(['mcp turn m1: tasks/get failed (-32602 Unknown task)']);
    });
  });
});
