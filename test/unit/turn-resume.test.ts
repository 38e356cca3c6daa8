/**
 * A turn its process left running, taken up again (the turn machine through its session, as machine-harness.ts runs
 * it; what is taken up is decided by src/agent/session/decide.ts `decideOpen`): it announces nothing again, answers
 * the calls it must not repeat as interrupted, runs again those safe to repeat (a recorded remote task is polled),
 * and asks its next model step on.
 */
import { describe, expect, it } from 'vitest';
import type { ResumedTurn, ToolCallInput } from '../../src/conversation/turn-contract.ts';
import { STEP_SEPARATOR, type PlannedCall } from '../../src/conversation/turn-steps.ts';
import { askTools, gatedTools, harness, ok, reply, script, waitUntil, type ToolFake } from './machine-harness.ts';

const running = (over: Partial<ResumedTurn>): ResumedTurn => ({
  iteration: 0,
  reply: '',
  lastText: '',
  awaiting: [],
  rerun: [],
  interrupted: [],
  unannounced: [],
  expiresAt: '',
  waitMs: 0,
  ...over,
});
const planned = (callId: string, name: string, extra: Partial<PlannedCall> = {}): PlannedCall => ({
  callId,
  name,
  toolName: name,
  serverId: 'srv',
  args: {},
  ...extra,
});

describe('turn machine: a turn resumed after its process stopped', () => {
  it('cut short in its first model step: asks it again under its own id, announcing nothing again', async () => {
    const h = harness({ model: script(reply('Hello again')) });
    const turnId = h.send('hi', running({}));
    await h.idle();
    expect(h.modelInputs.map((i) => [i.key.turnId, i.iteration, i.prefix])).toEqual([[turnId, 1, '']]);
    expect(h.trace(turnId)).toEqual(['fact:response']);
    expect(h.facts('response')[0]).toMatchObject({ turnId, content: 'Hello again', text: 'Hello again' });
  });

  it('cut short after a step: its next step joins the reply so far, so the reply is whole', async () => {
    const h = harness({ model: script(reply('unused'), reply('done')) });
    h.send('hi', running({ iteration: 1, reply: 'Looking.', lastText: 'Looking.' }));
    await h.idle();
    expect(h.modelInputs.map((i) => [i.iteration, i.prefix])).toEqual([[2, STEP_SEPARATOR]]);
    expect(h.facts('response')[0]?.content).toBe(`Looking.${STEP_SEPARATOR}done`);
  });

  it('runs again a call safe to repeat, answers the others as interrupted (one never stored is announced first), then steps on', async () => {
    const t = gatedTools();
    const h = harness({ model: script(askTools('unused'), reply('after')), tool: t.tool });
    const safe = planned('s', 'echo', { rerunSafe: true });
    const unstored = planned('u', 'add', { serverId: '' });
    const turnId = h.send(
      'go',
      running({
        iteration: 1,
        rerun: [safe],
        interrupted: [planned('x', 'add'), unstored],
        unannounced: [unstored],
      }),
    );
    await waitUntil(() => t.gates.has('s'));
    expect([...t.gates.keys()]).toEqual(['s']);
    expect(h.trace(turnId)).toEqual(['fact:toolCall', 'fact:toolResult', 'fact:toolResult']);
    expect(h.facts('toolResult').map((r) => [r.callId, r.success, r.text])).toEqual([
      [
        'x',
        false,
        'Tool "add" was interrupted: the service stopped while it ran, and the call may or may not have taken effect.',
      ],
      [
        'u',
        false,
        'Tool "add" was interrupted: the service stopped while it ran, and the call may or may not have taken effect.',
      ],
    ]);
    expect(h.modelInputs).toEqual([]); // the safe call has not returned
    t.gate('s').resolve(ok('again'));
    await h.idle();
    expect(h.facts('toolResult').map((r) => [r.callId, r.success])).toEqual([
      ['x', false],
      ['u', false],
      ['s', true],
    ]);
    expect(h.modelInputs.map((i) => i.iteration)).toEqual([2]);
    expect(h.facts('response')[0]?.content).toBe('after');
  });

  it('runs again a call with a recorded remote task, handing the tool port its task to poll (whatever its tool)', async () => {
    const inputs: ToolCallInput[] = [];
    const tool: ToolFake = (input) => {
      inputs.push(input);
      return Promise.resolve(ok('report'));
    };
    const h = harness({ model: script(askTools('unused'), reply('after')), tool });
    const task = { taskId: 'task-1', mcpSessionId: 'mcp-1' };
    const turnId = h.send('go', running({ iteration: 1, rerun: [planned('r', 'research', { task })] }));
    await h.idle();
    expect(inputs.map((i) => [i.callId, i.name, i.task])).toEqual([['r', 'research', task]]);
    expect(h.trace(turnId)).toEqual(['fact:toolResult', 'fact:response']);
    expect(h.facts('toolResult').map((r) => [r.callId, r.success])).toEqual([['r', true]]);
    expect(h.facts('response')[0]?.content).toBe('after');
  });
});
