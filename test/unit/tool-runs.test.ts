/** The tools a turn called, read off its frames (src/agent/follow/tool-runs.ts): call order, results, repeats. */
import { describe, expect, it } from 'vitest';
import { createToolRuns } from '../../src/agent/follow/tool-runs.ts';
import type { AgentFrame } from '../../src/agent/frames.ts';

const ref = { sessionId: 's', turnId: 't', seq: 1 };
const call = (callId: string, toolName: string): AgentFrame => ({
  event: 'toolCall',
  data: { ...ref, callId, toolName, serverId: 'echo', args: {} },
});
const result = (callId: string, toolName: string, success: boolean): AgentFrame => ({
  event: 'toolResult',
  data: { ...ref, callId, toolName, serverId: 'echo', success, result: {}, durationMs: 1 },
});

describe('tool runs', () => {
  it('lists calls in call order whatever order their results come in; a call without a result is not ok', () => {
    const runs = createToolRuns();
    const frames = [call('a', 'echo'), call('b', 'fail'), call('c', 'big'), result('b', 'fail', false)];
    for (const f of [...frames, result('a', 'echo', true)]) runs.see(f);
    expect(runs.list()).toEqual([
      { name: 'echo', server: 'echo', ok: true },
      { name: 'fail', server: 'echo', ok: false },
      { name: 'big', server: 'echo', ok: false },
    ]);
  });

  it('passes over other frames, and a frame seen twice changes nothing', () => {
    const runs = createToolRuns();
    const frames: AgentFrame[] = [
      { event: 'thinking', data: ref },
      call('a', 'echo'),
      result('a', 'echo', true),
      call('a', 'echo'),
      result('a', 'echo', true),
    ];
    frames.forEach(runs.see);
    expect(runs.list()).toEqual([{ name: 'echo', server: 'echo', ok: true }]);
  });
});
