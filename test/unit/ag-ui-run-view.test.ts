/**
 * A run is a view of a turn (src/ag-ui-face/run-view.ts): given a turn's steps, when they are folded, then
 * these AG-UI events come out — in an order @ag-ui/client's own verifier accepts, each valid by
 * @ag-ui/core's schema.
 */
import { verifyEvents } from '@ag-ui/client';
import { EventType, type Event } from '@ag-ui/core';
import { EventSchema } from '@ag-ui/core/schemas';
import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { TransientFrame, TurnStep } from '../../src/agent/index.ts';
import { EVENT_VERSION, type SessionEvent } from '../../src/conversation/session-events.ts';
import { factAt, facts } from '../support/facts.ts';
import { foldStep, interrupted, runView, type RunView } from '../../src/ag-ui-face/index.ts';
import { runStarted } from '../../src/ag-ui-face/run-view.ts';

const S = 'thread-1';
const T = 'run-1';
const ref = (seq: number, turnId = T) => ({ sessionId: S, turnId, seq });
const fact = (event: SessionEvent, seq: number): TurnStep => factAt(event, seq, new Date(0).toISOString(), S);
const transient = (frame: TransientFrame): TurnStep => ({ kind: 'frame', frame, ts: 0 });
const user = (seq: number) => fact(facts.user(T), seq);
const thinking = (seq: number) => transient({ event: 'thinking', data: ref(seq) });
const chunk = (seq: number, content: string) => transient({ event: 'chunk', data: { ...ref(seq), content } });
const reasoning = (seq: number, text: string) =>
  fact({ v: EVENT_VERSION, type: 'reasoning', turnId: T, text, model: 'm', api: 'chat' }, seq);
const call = (seq: number, callId: string) => fact(facts.call(T, callId, 'echo', 'everything', { message: 'x' }), seq);
const result = (seq: number, callId: string) =>
  fact(facts.result(T, callId, true, { content: [{ type: 'text', text: 'Echo: x' }] }), seq);
const asked = (seq: number, callId: string) => fact(facts.approval(T, callId), seq);
const answered = (seq: number, callId: string) => fact(facts.approved(T, callId, 'approve', 'ag-ui'), seq);
const restarted = (seq: number, content: string) => fact(facts.resumed(T, content), seq);
const response = (seq: number, content: string) => fact(facts.response(T, content), seq);
const failed = (seq: number, reason: string) => fact(facts.failed(T, reason), seq);

/** The turn says it waits for `ids`. */
const waits = (seq: number, ids: string[]): TurnStep => ({
  kind: 'awaiting',
  data: { ...ref(seq), questionIds: ids },
  ts: 0,
});

/** Folds the steps into a fresh run (a run of `runId` after `since`): its view and every event, RUN_STARTED first. */
function run(steps: TurnStep[], opts: { runId?: string; since?: number; answering?: string[] } = {}) {
  const held = { answering: opts.answering ?? [] };
  let view: RunView = runView(S, opts.runId ?? T, T, opts.since ?? 0, held);
  const events = [runStarted(view)];
  for (const s of steps) {
    const next = foldStep(view, s);
    view = next.view;
    events.push(...next.events);
  }
  return { view, events };
}
const types = (events: { type: string }[]) => events.map((e) => e.type);
/** The text deltas, in order. */
const texts = (events: Event[]) => events.flatMap((e) => (e.type === EventType.TEXT_MESSAGE_CONTENT ? [e.delta] : []));

/** The events pass @ag-ui/client's verifier and @ag-ui/core's schema. */
async function verified(events: object[]) {
  for (const e of events) expect(EventSchema.safeParse(e).success, JSON.stringify(e)).toBe(true);
  return lastValueFrom(from(events as never[]).pipe(verifyEvents(false), toArray()));
}

describe('a run is a view of its turn', () => {
  it('a live reply: the turn starts, one step streams its text message, then RUN_FINISHED success', async () => {
    const { events } = run([user(1), thinking(1), chunk(1, 'Hel'), chunk(1, 'lo'), response(2, 'Hello')]);
    expect(types(events)).toEqual([
      'RUN_STARTED',
      'STEP_STARTED',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'STEP_FINISHED',
      'RUN_FINISHED',
    ]);
    expect(texts(events)).toEqual(['Hel', 'lo']);
    expect(events.at(-1)).toMatchObject({ threadId: S, runId: T, outcome: { type: 'success' } });
    await verified(events);
  });

  it('a turn taken up after a restart: the streamed text ends, is named superseded, and a new text message starts with the reply so far', async () => {
    const { events } = run([
      user(1),
      thinking(1),
      chunk(1, 'Looking.'),
      chunk(1, ' Half a sent'),
      restarted(2, 'Looking.'),
      chunk(2, ' Done.'),
      response(3, 'Looking. Done.'),
    ]);
    expect(types(events)).toEqual([
      'RUN_STARTED',
      'STEP_STARTED',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'STEP_FINISHED',
      'CUSTOM',
      'STEP_STARTED',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'STEP_FINISHED',
      'RUN_FINISHED',
    ]);
    expect(events[7]).toEqual({
      type: 'CUSTOM',
      name: 'agentd.stepRestarted',
      value: { attempt: 1, supersedes: [`${T}-text-1`] },
    });
    // The text message after it is the response, whole: nothing of the response is sent again.
    const last = events.filter((e) => e.type === EventType.TEXT_MESSAGE_CONTENT && e.messageId === `${T}-text-2`);
    expect(texts(last).join('')).toBe('Looking. Done.');
    await verified(events);
  });

  it('a replay (no chunks stored): the stored reply is sent whole', async () => {
    const { events } = run([user(1), response(2, 'Hello')]);
    expect(types(events)).toEqual([
      'RUN_STARTED',
      'STEP_STARTED',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'STEP_FINISHED',
      'RUN_FINISHED',
    ]);
    expect(events[3]).toMatchObject({ delta: 'Hello' });
    await verified(events);
  });

  it('a re-run that joins mid-step sends that text once, whole, with the reply; later steps stream', async () => {
    const { events } = run([
      user(1),
      chunk(1, 'lo'),
      call(2, 'c1'),
      result(3, 'c1'),
      chunk(3, ' Done.'),
      response(4, 'Hello Done.'),
    ]);
    expect(texts(events)).toEqual([' Done.', 'Hello']);
    await verified(events);
  });

  it('a server tool call: START/ARGS/END under the step, its RESULT, then the next step; reasoning before the call', async () => {
    const { events } = run([
      user(1),
      thinking(1),
      chunk(1, 'Let me see.'),
      reasoning(2, 'echo it'),
      call(3, 'c1'),
      result(4, 'c1'),
      chunk(4, ' Done.'),
      response(5, 'Let me see. Done.'),
    ]);
    expect(types(events)).toEqual([
      'RUN_STARTED',
      'STEP_STARTED',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'REASONING_START',
      'REASONING_MESSAGE_START',
      'REASONING_MESSAGE_CONTENT',
      'REASONING_MESSAGE_END',
      'REASONING_END',
      'TOOL_CALL_START',
      'TOOL_CALL_ARGS',
      'TOOL_CALL_END',
      'TOOL_CALL_RESULT',
      'STEP_FINISHED',
      'STEP_STARTED',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'STEP_FINISHED',
      'RUN_FINISHED',
    ]);
    const start = events.find((e) => e.type === EventType.TOOL_CALL_START);
    expect(start).toMatchObject({ toolCallId: 'c1', toolCallName: 'echo', parentMessageId: `${T}-text-1` });
    expect(events.find((e) => e.type === EventType.TOOL_CALL_ARGS)).toMatchObject({ delta: '{"message":"x"}' });
    expect(events.find((e) => e.type === EventType.TOOL_CALL_RESULT)).toMatchObject({
      toolCallId: 'c1',
      content: '{"content":[{"type":"text","text":"Echo: x"}]}',
    });
    expect(events.find((e) => e.type === EventType.REASONING_MESSAGE_CONTENT)).toMatchObject({ delta: 'echo it' });
    await verified(events);
  });

  it('the calls of one step stay in it; the output after their results is the next step', async () => {
    const { events } = run([
      user(1),
      thinking(1),
      call(2, 'c1'),
      call(3, 'c2'),
      result(4, 'c2'),
      result(5, 'c1'),
      chunk(5, 'ok'),
      response(6, 'ok'),
    ]);
    expect(
      events.filter((e) => e.type === EventType.STEP_STARTED).map((e) => (e as { stepName: string }).stepName),
    ).toEqual(['model step 1', 'model step 2']);
    expect(types(events).indexOf('STEP_FINISHED')).toBeGreaterThan(types(events).lastIndexOf('TOOL_CALL_RESULT'));
    await verified(events);
  });

  it('a turn waiting for approval ends its run with the interrupt; the resumed run sends the result, not the call again', async () => {
    const first = run([user(1), thinking(1), call(2, 'c1'), asked(3, 'c1')]);
    expect(first.view.open.map((q) => q.id)).toEqual(['c1']);
    expect(first.view.ended).toBe(false);
    const end = interrupted(first.view, first.view.open);
    expect(end.events.at(-1)).toMatchObject({
      type: 'RUN_FINISHED',
      outcome: {
        type: 'interrupt',
        interrupts: [
          {
            id: 'c1',
            reason: 'tool_call',
            toolCallId: 'c1',
            expiresAt: '2026-01-01T00:00:00.000Z',
            responseSchema: { required: ['approved'] },
          },
        ],
      },
    });
    await verified([...first.events, ...end.events]);

    const resumed = run(
      [user(1), call(2, 'c1'), asked(3, 'c1'), answered(4, 'c1'), result(5, 'c1'), chunk(5, 'Done.')],
      { runId: 'run-2', since: 3 },
    );
    expect(resumed.view.open).toEqual([]);
    const last = foldStep(resumed.view, response(6, 'Done.'));
    const events = [...resumed.events, ...last.events];
    expect(types(events)).toEqual([
      'RUN_STARTED',
      'TOOL_CALL_RESULT',
      'STEP_STARTED',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'STEP_FINISHED',
      'RUN_FINISHED',
    ]);
    expect(events[1]).toMatchObject({ toolCallId: 'c1', messageId: 'run-2-result-c1' });
    await verified(events);
  });

  it('given two approvals asked in one step, the run ends on an interrupt naming both when the turn says it waits, not at the first', async () => {
    const asking = [user(1), thinking(1), call(2, 'c1'), asked(3, 'c1')];
    expect(run(asking).view.ended).toBe(false);
    const { view, events } = run([...asking, call(4, 'c2'), asked(5, 'c2'), waits(5, ['c1', 'c2']), chunk(5, 'late')]);
    expect(view.ended).toBe(true);
    expect(events.at(-1)).toMatchObject({
      type: 'RUN_FINISHED',
      outcome: { type: 'interrupt', interrupts: [{ id: 'c1' }, { id: 'c2' }] },
    });
    expect(texts(events)).toEqual([]); // nothing after the end
    await verified(events);
  });

  it('an awaiting naming a question the run answers itself, or one it never saw asked, does not end the run', () => {
    const resumed = run([user(1), call(2, 'c1'), asked(3, 'c1'), waits(3, ['c1'])], { answering: ['c1'] });
    expect(resumed.view.ended).toBe(false);
    expect(run([user(1), waits(1, ['c9'])]).view.ended).toBe(false);
    const next = run([user(1), call(2, 'c1'), asked(3, 'c1'), answered(4, 'c1'), asked(5, 'c2'), waits(5, ['c2'])], {
      answering: ['c1'],
    });
    expect(next.events.at(-1)).toMatchObject({ outcome: { type: 'interrupt', interrupts: [{ id: 'c2' }] } });
  });

  it('a call of a tool the client runs ends the run as a success naming it pending; with an approval beside it, the interrupt comes first', async () => {
    const clientCall = (seq: number, callId: string) => fact(facts.clientTool(T, callId, 'locate'), seq);
    const first = run([user(1), thinking(1), call(2, 'c1'), clientCall(3, 'c1')]);
    expect(first.view.open.map((q) => q.kind)).toEqual(['clientTool']);
    const end = interrupted(first.view, first.view.open);
    expect(end.events.at(-1)).toMatchObject({
      type: 'RUN_FINISHED',
      outcome: { type: 'success', pendingToolCallIds: ['c1'] },
    });
    await verified([...first.events, ...end.events]);

    const both = run([user(1), thinking(1), call(2, 'c1'), call(3, 'c2'), clientCall(4, 'c1'), asked(5, 'c2')]);
    expect(interrupted(both.view, both.view.open).events.at(-1)).toMatchObject({
      outcome: { type: 'interrupt', interrupts: [{ id: 'c2', reason: 'tool_call' }] },
    });
  });

  it('a cancelled turn finishes with outcome cancelled; a failed one with RUN_ERROR and the error code', async () => {
    const cancelled = run([user(1), thinking(1), chunk(1, 'Hel'), failed(2, 'cancelled')]);
    expect(types(cancelled.events).slice(-3)).toEqual(['TEXT_MESSAGE_END', 'STEP_FINISHED', 'RUN_FINISHED']);
    expect(cancelled.events.at(-1)).toMatchObject({ outcome: { type: 'cancelled' } });
    await verified(cancelled.events);

    const broken = run([user(1), thinking(1), failed(2, 'model')]);
    expect(broken.events.at(-1)).toMatchObject({
      type: 'RUN_ERROR',
      code: 'AGENT_ERROR',
      message: 'stopped',
      rawEvent: { event: 'error', data: { details: { reason: 'model' } } },
    });
    await verified(broken.events);
  });

  it('steps of other turns and anything after the end send nothing', () => {
    const other = transient({ event: 'chunk', data: { ...ref(1, 'run-0'), content: 'x' } });
    const { view, events } = run([other, user(1), response(2, 'ok'), chunk(2, 'late')]);
    expect(types(events)).toEqual([
      'RUN_STARTED',
      'STEP_STARTED',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'STEP_FINISHED',
      'RUN_FINISHED',
    ]);
    expect(view.ended).toBe(true);
  });
});
