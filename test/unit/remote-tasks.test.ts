/** The remote tasks a session's log holds for calls without a result (src/agent/session/remote-tasks.ts). */
import { describe, expect, it } from 'vitest';
import { checkSessionEvent, EVENT_VERSION, type SessionEvent } from '../../src/conversation/session-events.ts';
import { recordedTask } from '../../src/agent/session/remote-tasks.ts';
import { foldSession } from '../../src/agent/session/state.ts';

const v = EVENT_VERSION;
const ref = (callId: string, turnId = 't1') => ({ turnId, callId, toolName: 'slow-job', serverId: 'tasks' });
const call = (callId: string, turnId = 't1'): SessionEvent => ({
  v,
  type: 'toolCall',
  ...ref(callId, turnId),
  args: {},
});
const task = (callId: string, taskId: string, turnId = 't1'): SessionEvent => ({
  v,
  type: 'toolTask',
  turnId,
  callId,
  taskId,
});
const user = (turnId: string): SessionEvent => ({ v, type: 'userMessage', turnId, content: 'go' });

describe('remote tasks of a session', () => {
  it('holds the task of a call until its result; an HTTP task keeps its MCP session id', () => {
    const state = foldSession('s', [
      user('t1'),
      call('c1'),
      { v, type: 'toolTask', turnId: 't1', callId: 'c1', taskId: 'k1', mcpSessionId: 'm1' },
      call('c2'),
      task('c2', 'k2'),
      { v, type: 'toolResult', ...ref('c2'), success: true, result: {}, text: 'done', durationMs: 5 },
    ]);
    expect(recordedTask(state.remoteTasks, 'c1')).toEqual({ taskId: 'k1', mcpSessionId: 'm1' });
    expect(recordedTask(state.remoteTasks, 'c2')).toBeUndefined();
  });

  it("forgets a turn's tasks when the turn ends, and all of them on a reset", () => {
    const ended = foldSession('s', [
      user('t1'),
      call('c1'),
      task('c1', 'k1'),
      { v, type: 'turnFailed', turnId: 't1', code: 'AGENT_ERROR', message: 'cancelled', details: {}, cancelled: true },
    ]);
    expect(ended.remoteTasks.size).toBe(0);
    const reset = foldSession('s', [user('t2'), call('c3', 't2'), task('c3', 'k3', 't2'), { v, type: 'reset' }]);
    expect(reset.remoteTasks.size).toBe(0);
  });

  it('reads a stored toolTask line back, and refuses one without its task id', () => {
    const line = { v: 4, type: 'toolTask', turnId: 't1', callId: 'c1', taskId: 'k1', mcpSessionId: 'm1' };
    expect(checkSessionEvent(JSON.parse(JSON.stringify(line)))).toEqual({ ok: true, event: line });
    expect(checkSessionEvent({ ...line, taskId: undefined })).toMatchObject({
      ok: false,
      issue: expect.stringContaining('taskId'),
    });
  });
});
