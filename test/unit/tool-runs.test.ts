/** The tools a turn called, read off its facts (src/agent/follow/tool-runs.ts): call order, results, repeats. */
import { describe, expect, it } from 'vitest';
import { createToolRuns } from '../../src/agent/follow/tool-runs.ts';
import type { SessionEvent } from '../../src/conversation/session-events.ts';
import { facts, stored } from '../support/facts.ts';

const at = '2026-01-01T00:00:00.000Z';
const fact = (event: SessionEvent) => stored(event, 1, at);
const call = (callId: string, toolName: string) => fact(facts.call('t', callId, toolName, 'echo'));
const result = (callId: string, toolName: string, success: boolean) =>
  fact({
    ...(facts.result('t', callId, success, {}, toolName) as Extract<SessionEvent, { type: 'toolResult' }>),
    serverId: 'echo',
  });

describe('tool runs', () => {
  it('lists calls in call order whatever order their results come in; a call without a result is not ok', () => {
    const runs = createToolRuns();
    const seen = [call('a', 'echo'), call('b', 'fail'), call('c', 'big'), result('b', 'fail', false)];
    for (const f of [...seen, result('a', 'echo', true)]) runs.see(f);
    expect(runs.list()).toEqual([
      { name: 'echo', server: 'echo', ok: true },
      { name: 'fail', server: 'echo', ok: false },
      { name: 'big', server: 'echo', ok: false },
    ]);
  });

  it('passes over other facts, and a fact seen twice changes nothing', () => {
    const runs = createToolRuns();
    const seen = [
      fact(facts.user('t')),
      call('a', 'echo'),
      result('a', 'echo', true),
      call('a', 'echo'),
      result('a', 'echo', true),
    ];
    seen.forEach(runs.see);
    expect(runs.list()).toEqual([{ name: 'echo', server: 'echo', ok: true }]);
  });
});
