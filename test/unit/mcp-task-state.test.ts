/** MCP tasks are turns: the one mapping from a turn's steps to an MCP task (src/mcp-face/task-state.ts) and its id. */
import { describe, expect, it } from 'vitest';
import type { TurnStep } from '../../src/agent/index.ts';
import type { SessionEvent, SessionEventOf } from '../../src/conversation/session-events.ts';
import { factAt, facts } from '../support/facts.ts';
import { parseTaskId, taskIdOf, taskState } from '../../src/mcp-face/task-state.ts';
import { sessionKey } from '../../src/session-id.ts';

const T = 'turn-1';
const at = (seq: number) => Date.UTC(2026, 0, 1, 0, 0, seq);
const fact = (event: SessionEvent, seq: number) => factAt(event, seq, new Date(at(seq)).toISOString(), 's');
const queued: TurnStep = fact(facts.queued(T), 1);
const user = (seq: number, turnId = T) => fact(facts.user(turnId), seq);
const asked = (seq: number, callId: string) => fact(facts.approval(T, callId), seq);
const answered = (seq: number, callId: string) => fact(facts.approved(T, callId), seq);
const response = (seq: number) => fact(facts.response(T, 'done'), seq);
const error = (seq: number, reason?: string): TurnStep =>
  fact({ ...(facts.failed(T, reason ?? '') as SessionEventOf<'turnFailed'>), details: reason ? { reason } : {} }, seq);

describe('MCP task state', () => {
  it("completes an MCP App's call (a turn of its own) with its result, as a reply would", () => {
    const app = { appCallId: 'c0' };
    const result = fact({ ...facts.result(T, 'c1', true, 'counter at 2'), ...app }, 2);
    expect(taskState(T, [fact({ ...facts.user(T, ''), ...app }, 1), result])).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'counter at 2' }] },
    });
  });

  it('is unknown without the turn, working once its message is stored (queued or started)', () => {
    expect(taskState(T, [])).toBeUndefined();
    expect(taskState(T, [user(1, 'other')])).toBeUndefined();
    expect(taskState(T, [queued])).toMatchObject({ status: 'working', started: false });
    expect(taskState(T, [queued, user(2)])).toMatchObject({
      status: 'working',
      started: true,
      createdAt: new Date(at(1)).toISOString(),
    });
  });

  it('is input_required while a question waits, working again once every one is answered', () => {
    const waiting = taskState(T, [user(1), asked(2, 'a'), asked(3, 'b'), answered(4, 'a')]);
    expect(waiting).toMatchObject({
      status: 'input_required',
      waiting: ['b'],
      statusMessage: expect.stringMatching(/a question/),
    });
    expect(waiting?.lastUpdatedAt).toBe(new Date(at(4)).toISOString());
    expect(taskState(T, [user(1), asked(2, 'a'), answered(3, 'a')])).toMatchObject({ status: 'working', waiting: [] });
  });

  it("ends completed with the reply, failed with the error, cancelled by a cancel or a reset: chat_with_agent's result", () => {
    expect(taskState(T, [user(1), response(2)])?.result).toEqual({ content: [{ type: 'text', text: 'done' }] });
    expect(taskState(T, [user(1), error(2)])).toMatchObject({
      status: 'failed',
      statusMessage: 'stopped',
      result: { isError: true, content: [{ type: 'text', text: 'The agent failed: stopped' }] },
    });
    expect(taskState(T, [user(1), error(2, 'cancelled')])?.status).toBe('cancelled');
    expect(taskState(T, [user(1), error(2, 'reset')])?.status).toBe('cancelled');
    expect(taskState(T, [user(1), response(2), error(3)])?.status).toBe('completed');
  });

  it('names the session key and the turn in its id, and reads them back; a malformed id names nothing', () => {
    const key = sessionKey('carol', 'my/session');
    expect(parseTaskId(taskIdOf(key, T))).toEqual({ key, turnId: T });
    for (const bad of ['', 'abc', 'a/b/c', '/t', 'a+b/t']) expect(parseTaskId(bad)).toBeUndefined();
  });
});
