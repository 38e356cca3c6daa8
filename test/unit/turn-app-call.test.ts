/**
 * An MCP App's call of a tool in the turn machine (through its session, as machine-harness.ts runs it, with the app's
 * step as the session answers it: src/agent/session/app-step.ts): the turn announces only its user message (marked as
 * the app's), its one step is the app's call under the tool policy (allow, ask, deny), it never asks the model and
 * ends with the call's result, no reply; resumed from its log, it never runs the call again unless safe.
 */
import { describe, expect, it } from 'vitest';
import type { ModelTool } from '../../src/conversation/tool-shapes.ts';
import type { AppToolCall, ResumedTurn } from '../../src/conversation/turn-contract.ts';
import { gatedTools, harness, ok, waitUntil, type ModelFake } from './machine-harness.ts';

const refresh: ModelTool = {
  name: 'apps--refresh',
  description: 'refresh',
  parameters: { type: 'object' },
  serverId: 'apps',
  toolName: 'refresh',
  ui: { visibility: ['app'] },
};
const appCall = (callId: string, args: Record<string, unknown> = {}): AppToolCall => ({
  appCallId: 'shown',
  call: { callId, tool: refresh, args },
});
/** The model: never asked for an app's turn. */
const noModel: ModelFake = () => Promise.reject(new Error('the model was asked'));

describe("turn machine: an MCP App's call", () => {
  it('runs the call as its one step: its user message, step, call and result (marked as the app’s), no thinking, no reply', async () => {
    const called: unknown[] = [];
    const h = harness({
      model: noModel,
      tool: (c) => (called.push([c.callId, c.name, c.args]), Promise.resolve(ok('r'))),
    });
    const turnId = h.send('', undefined, appCall('c1', { n: 1 }));
    await h.idle();
    expect(h.trace(turnId)).toEqual(['fact:userMessage', 'fact:assistantStep', 'fact:toolCall', 'fact:toolResult']);
    expect(called).toEqual([['c1', 'apps--refresh', { n: 1 }]]);
    expect(h.facts('userMessage')[0]).toMatchObject({ content: '', appCallId: 'shown' });
    expect(h.facts('assistantStep')[0]).toMatchObject({
      text: '',
      model: 'app',
      toolCalls: [{ id: 'c1', name: 'apps--refresh', arguments: '{"n":1}' }],
    });
    expect(h.facts('toolCall')[0]).toMatchObject({
      callId: 'c1',
      toolName: 'refresh',
      serverId: 'apps',
      appCallId: 'shown',
    });
    expect(h.facts('toolResult')[0]).toMatchObject({ callId: 'c1', success: true, appCallId: 'shown' });
  });

  it('keeps no app of the called tool’s own with its result (the app is on screen already)', async () => {
    const app = { resourceUri: 'ui://x/app.html', mimeType: 'text/html;profile=mcp-app' as const, html: '<p>x</p>' };
    const h = harness({ model: noModel, tool: () => Promise.resolve({ ...ok('r'), app }) });
    h.send('', undefined, appCall('c1'));
    await h.idle();
    expect(h.facts('toolResult')[0]?.app).toBeUndefined();
  });

  it('denied by the policy: a failed result, the tool never called', async () => {
    const called: string[] = [];
    const h = harness({
      model: noModel,
      policy: () => 'deny',
      tool: (c) => (called.push(c.callId), Promise.resolve(ok('r'))),
    });
    const turnId = h.send('', undefined, appCall('c1'));
    await h.idle();
    expect(called).toEqual([]);
    expect(h.trace(turnId)).toEqual(['fact:userMessage', 'fact:assistantStep', 'fact:toolCall', 'fact:toolResult']);
    expect(h.facts('toolResult')[0]).toMatchObject({ success: false, appCallId: 'shown' });
    expect(h.facts('toolResult')[0]?.text).toContain('tool policy: deny');
  });

  it('asked about by the policy: waits for the approval, then runs the call and ends', async () => {
    const t = gatedTools();
    const h = harness({ model: noModel, policy: () => 'ask', tool: t.tool });
    const turnId = h.send('', undefined, appCall('c1'));
    await waitUntil(() => h.trace(turnId).includes('awaiting:c1'));
    expect(h.facts('questionAsked')[0]?.question).toMatchObject({ id: 'c1', kind: 'approval', toolName: 'refresh' });
    expect(t.gates.size).toBe(0);
    h.actor.send({ type: 'ANSWER', id: 'c1', answer: { decision: 'approve' }, by: 'rest' });
    await waitUntil(() => t.gates.has('c1'));
    t.gate('c1').resolve(ok('done'));
    await h.idle();
    expect(h.trace(turnId).slice(-2)).toEqual(['fact:questionClosed', 'fact:toolResult']);
    expect(h.facts('toolResult')[0]).toMatchObject({ success: true, text: 'done' });
    expect(h.facts('response')).toEqual([]);
  });

  const resumed = (over: Partial<ResumedTurn>): ResumedTurn => ({
    iteration: 1,
    reply: '',
    lastText: '',
    awaiting: [],
    rerun: [],
    interrupted: [],
    expiresAt: '',
    waitMs: 0,
    ...over,
  });
  const stored = {
    callId: 'c1',
    name: 'apps--refresh',
    toolName: 'refresh',
    serverId: 'apps',
    args: {},
    appCallId: 'shown',
  };

  it('resumed with its call left running: answered as interrupted, never run again, and the turn ends (no model)', async () => {
    const called: string[] = [];
    const h = harness({ model: noModel, tool: (c) => (called.push(c.callId), Promise.resolve(ok('r'))) });
    const turnId = h.send('', resumed({ interrupted: [stored] }), { appCallId: 'shown' });
    await h.idle();
    expect(called).toEqual([]);
    expect(h.modelInputs).toEqual([]);
    expect(h.trace(turnId)).toEqual(['fact:toolResult']);
    expect(h.facts('toolResult')[0]).toMatchObject({ callId: 'c1', success: false, appCallId: 'shown' });
    expect(h.facts('toolResult')[0]?.text).toContain('was interrupted');
  });

  it('resumed with a call safe to repeat: runs it again, and ends', async () => {
    const called: string[] = [];
    const h = harness({ model: noModel, tool: (c) => (called.push(c.callId), Promise.resolve(ok('again'))) });
    const turnId = h.send('', resumed({ rerun: [{ ...stored, rerunSafe: true }] }), { appCallId: 'shown' });
    await h.idle();
    expect(called).toEqual(['c1']);
    expect(h.trace(turnId)).toEqual(['fact:toolResult']);
  });

  it('resumed before its step was stored: fails (the call never started), asking nothing', async () => {
    const h = harness({ model: noModel });
    const turnId = h.send('', resumed({ iteration: 0 }), { appCallId: 'shown' });
    await h.idle();
    expect(h.modelInputs).toEqual([]);
    expect(h.trace(turnId)).toEqual(['fact:turnFailed']);
    expect(h.facts('turnFailed')[0]).toMatchObject({ code: 'AGENT_ERROR', details: { reason: 'interrupted' } });
  });
});
