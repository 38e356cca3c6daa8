/**
 * `sampling: ask` on the session's side (src/agent/session-sampling-approvals.ts): a server's sampling
 * request becomes a pending approval like a tool call's, answered by a person, its timeout or its
 * call's end, and closed after a restart instead of resumed.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApprovals, resumeOf } from '../../src/agent/approvals.ts';
import { createSessionSamplingApprovals, SAMPLING_TOOL_NAME } from '../../src/agent/session-sampling-approvals.ts';
import type { SessionEvent } from '../../src/conversation/session-events.ts';
import type { WaitingQuestion } from '../../machines/turn.machine.ts';
import type { SamplingRequest } from '../../src/tools/sampling.ts';

const request: SamplingRequest = { serverId: 'everything', systemPrompt: 'be brief', messages: [{ role: 'user', content: 'hi' }], maxTokens: 50, needsApproval: true };
const call = { turnId: 't1', callId: 'c1' };

function given(timeoutMs = 60_000) {
  const recorded: SessionEvent[] = [];
  const waiting: [string, boolean][] = [];
  const opened: WaitingQuestion[] = [];
  const fold = createApprovals('s1');
  const sampling = createSessionSamplingApprovals({
    sessionId: 's1', clock: { now: () => Date.now() }, timeoutMs, fold, record: (_meta, e) => recorded.push(e), correlationOf: (turnId) => turnId,
    onChange: (change) => {
      waiting.push(change.pending ? [change.question.id, true] : [change.id, false]);
      if (change.pending) opened.push(change.question);
    },
  });
  const calling = new AbortController();
  const ask = () => sampling.ask(request, call, { deadline: Date.now() + 600_000, signal: calling.signal });
  return { recorded, waiting, opened, fold, sampling, calling, ask };
}

afterEach(() => void vi.useRealTimers());

describe('sampling requests waiting for approval', () => {
  it('given a request, then it is a pending approval of its own call id, shown under sampling/createMessage with the server and its messages', () => {
    const { recorded, fold, waiting, opened, ask } = given();
    void ask();
    const [asked] = recorded;
    expect(asked).toMatchObject({ type: 'toolApprovalRequested', turnId: 't1', toolName: SAMPLING_TOOL_NAME, serverId: 'everything', args: { systemPrompt: 'be brief', messages: request.messages, maxTokens: 50 } });
    const callId = (asked as { callId: string }).callId;
    expect(callId).toMatch(/^c1~sampling-[0-9a-f]{8}$/);
    expect(fold.pending().map((p) => p.callId)).toEqual([callId]);
    expect(waiting).toEqual([[callId, true]]);
    expect(opened[0]).toMatchObject({ id: callId, kind: 'sampling', serverId: 'everything', callId: 'c1' });
  });

  it('when a person approves, then the request resolves approved, the resolution is stored and the turn stops waiting', async () => {
    const { recorded, fold, waiting, sampling, ask } = given();
    const decided = ask();
    const callId = fold.pending()[0]!.callId;
    expect(sampling.holds(callId)).toBe(true);
    sampling.settle(fold.answer(callId), { decision: 'approve' }, 'rest');
    await expect(decided).resolves.toEqual({ decision: 'approve' });
    expect(recorded[1]).toMatchObject({ type: 'toolApprovalResolved', callId, decision: 'approve', by: 'rest' });
    expect(fold.pending()).toEqual([]);
    expect(sampling.holds(callId)).toBe(false);
    expect(waiting.at(-1)).toEqual([callId, false]);
    expect(() => fold.answer(callId)).toThrow(/already answered/);
  });

  it('when nobody answers in time, then it is denied by timeout', async () => {
    vi.useFakeTimers();
    const { recorded, ask } = given(5_000);
    const decided = ask();
    vi.advanceTimersByTime(5_000);
    await expect(decided).resolves.toMatchObject({ decision: 'deny' });
    expect(recorded[1]).toMatchObject({ type: 'toolApprovalResolved', decision: 'deny', by: 'timeout' });
  });

  it('when its call ends first, then it is denied by call-ended; a turn end closes it without another record', async () => {
    const first = given();
    const ended = first.ask();
    first.calling.abort();
    await expect(ended).resolves.toMatchObject({ decision: 'deny' });
    expect(first.recorded[1]).toMatchObject({ type: 'toolApprovalResolved', by: 'call-ended' });

    const second = given();
    const closed = second.ask();
    second.fold.apply({ v: 3, type: 'turnFailed', turnId: 't1', code: 'AGENT_ERROR', message: 'x', details: {} });
    second.sampling.sync();
    await expect(closed).resolves.toMatchObject({ decision: 'deny' });
    expect(second.recorded).toHaveLength(1);
  });

  it('given a log left with a sampling request pending, when the session opens, then it is denied by restart and never resumed as a tool call', () => {
    const { recorded, fold, ask } = given();
    void ask();
    const log: SessionEvent[] = [
      { v: 3, type: 'userMessage', turnId: 't1', content: 'go' },
      { v: 3, type: 'assistantStep', turnId: 't1', text: '', toolCalls: [{ id: 'c1', name: 'trigger', arguments: '{}' }], model: 'm' },
      { v: 3, type: 'toolCall', turnId: 't1', callId: 'c1', toolName: 'trigger', serverId: 'everything', args: {} },
      recorded[0]!,
    ];
    expect(resumeOf(log, Date.now())).toBeUndefined();
    const reopened = given();
    for (const e of log) reopened.fold.apply(e);
    reopened.sampling.closeStale();
    expect(reopened.recorded).toMatchObject([{ type: 'toolApprovalResolved', callId: fold.pending()[0]!.callId, decision: 'deny', by: 'restart' }]);
    expect(reopened.fold.pending()).toEqual([]);
  });
});
