/** Tasks are turns: the one mapping from a turn's steps to an A2A task (src/a2a-face/task-view.ts), its wire forms and the card's origin. */
import { describe, expect, it } from 'vitest';
import type { TurnStep } from '../../src/agent/index.ts';
import type { SessionEvent } from '../../src/conversation/session-events.ts';
import { factAt, facts } from '../support/facts.ts';
import { endpointOrigin } from '../../src/a2a-face/card.ts';
import { parseTaskId, taskIdOf, taskView } from '../../src/a2a-face/task-view.ts';
import { encodeTask, streamEvents, versionOf } from '../../src/a2a-face/wire.ts';

const S = 'ctx-1';
/** The time of the step of seq `seq` (transient steps, which carry the last durable seq, get a later one). */
const at = (seq: number, later = 0) => new Date(Date.UTC(2026, 0, 1, 0, 0, seq, later)).toISOString();
const ref = (turnId: string, seq: number) => ({ sessionId: S, turnId, seq });
const fact = (event: SessionEvent, seq: number) => factAt(event, seq, at(seq), S);
const user = (turnId: string, seq: number, content = 'hi') => fact(facts.user(turnId, content), seq);
const queued = (turnId: string, seq: number, content = 'hi') => fact(facts.queued(turnId, content), seq);
const chunk = (turnId: string, seq: number, content: string): TurnStep => ({
  kind: 'frame',
  frame: { event: 'chunk', data: { ...ref(turnId, seq), content } },
  ts: Date.parse(at(seq, 500)),
});
const restarted = (turnId: string, seq: number, content: string) => fact(facts.resumed(turnId, content), seq);
const response = (turnId: string, seq: number, content: string) => fact(facts.response(turnId, content), seq);
const asked = (turnId: string, seq: number, callId: string) => fact(facts.approval(turnId, callId), seq);
const answered = (turnId: string, seq: number, callId: string) =>
  fact(facts.approved(turnId, callId, 'approve', 'a2a'), seq);
const question = (turnId: string, seq: number, id: string) => fact(facts.elicitation(turnId, id), seq);
const replied = (turnId: string, seq: number, id: string) => fact(facts.elicited(turnId, id, 'a2a'), seq);
/** The turn says it waits for `ids` (stamped with the time of its last fact, as a live one is). */
const waits = (turnId: string, seq: number, ids: string[]): TurnStep => ({
  kind: 'awaiting',
  data: { ...ref(turnId, seq), questionIds: ids },
  ts: Date.parse(at(seq)),
});
const failed = (turnId: string, seq: number, reason: string, message = 'stopped') =>
  fact(facts.failed(turnId, reason, message), seq);

describe('taskView', () => {
  it("given an MCP App's call (a turn of its own), when its result is folded, then the task is completed with the result's text", () => {
    const app = { appCallId: 'c0' };
    const turn = [
      fact({ ...facts.user('t1', ''), ...app }, 1),
      fact({ ...facts.result('t1', 'c1', true, 'counter at 2'), ...app }, 2),
    ];
    expect(taskView(S, 't1', turn.slice(0, 1))).toMatchObject({ state: 'working' });
    expect(taskView(S, 't1', turn)).toMatchObject({ state: 'completed', reply: 'counter at 2', questions: [] });
  });

  it("given a tool server's question, when folded, then input-required with the question and how to answer it, until it is answered", () => {
    const frames = [user('t1', 1), question('t1', 2, 'e1'), waits('t1', 2, ['e1']), replied('t1', 3, 'e1')];
    expect(taskView(S, 't1', frames.slice(0, 2))).toMatchObject({ state: 'working' }); // until the turn says it waits
    const waiting = taskView(S, 't1', frames.slice(0, 3))!;
    expect(waiting).toMatchObject({
      state: 'input-required',
      questions: [{ id: 'e1', kind: 'elicitation', serverId: 'everything', message: 'Your name?', mode: 'form' }],
    });
    expect(waiting.statusText).toContain('Your name?');
    expect(waiting.statusText).toContain('"elicitationId": "e1"');
    const answered = taskView(S, 't1', frames)!;
    expect(answered).toMatchObject({ state: 'working', questions: [] });
    expect(answered.statusText).toBeUndefined();
  });

  it('given no userMessage of the turn, when folded, then there is no task', () => {
    expect(taskView(S, 't1', [user('t0', 1), response('t0', 2, 'x')])).toBeUndefined();
  });

  it('given a message waiting in the queue, when folded, then the task is submitted; its turn starting makes it working', () => {
    const waiting = taskView(S, 't1', [queued('t1', 1, 'hello')]);
    expect(waiting).toMatchObject({
      id: 'ctx-1/t1',
      contextId: S,
      state: 'submitted',
      request: 'hello',
      reply: '',
      statusAt: at(1),
    });
    expect(parseTaskId(waiting!.id)).toEqual({ contextId: S, turnId: 't1' });
    expect(taskView(S, 't1', [queued('t1', 1, 'hello'), user('t1', 3, 'hello')])).toMatchObject({
      state: 'working',
      request: 'hello',
      statusAt: at(3),
    });
  });

  it('given a user message, when folded, then the task is working (its turn started) since the message was stored', () => {
    expect(taskView(S, 't1', [user('t1', 1, 'hello')])).toMatchObject({
      state: 'working',
      request: 'hello',
      statusAt: at(1),
    });
  });

  it('stamps the status with the time of the step that changed it, not of later steps', () => {
    const frames = [
      user('t1', 1),
      chunk('t1', 1, 'a'),
      asked('t1', 2, 'c1'),
      waits('t1', 2, ['c1']),
      chunk('t1', 2, 'b'),
      answered('t1', 3, 'c1'),
      chunk('t1', 3, 'c'),
      response('t1', 4, 'abc'),
    ];
    const statusAt = (n: number) => taskView(S, 't1', frames.slice(0, n))?.statusAt;
    expect([2, 3, 4, 5, 6, 7, 8].map(statusAt)).toEqual([at(1), at(1), at(2), at(2), at(3), at(3), at(4)]);
  });

  it('given chunks then the response, when folded, then the reply grows and the response settles it as completed', () => {
    const frames = [user('t1', 1), chunk('t1', 1, 'Hel'), chunk('t1', 1, 'lo'), response('t1', 2, 'Hello!')];
    expect(taskView(S, 't1', frames.slice(0, 3))).toMatchObject({ state: 'working', reply: 'Hello' });
    expect(taskView(S, 't1', frames)).toMatchObject({ state: 'completed', reply: 'Hello!' });
  });

  it('given chunks then a stepRestarted (the turn taken up after a restart), then its content replaces the reply, so the chunks after it join to the response', () => {
    const frames = [
      user('t1', 1),
      chunk('t1', 1, 'Looking.'),
      chunk('t1', 1, ' Half a sent'),
      restarted('t1', 2, 'Looking.'),
      chunk('t1', 2, ' Done.'),
    ];
    const before = taskView(S, 't1', frames.slice(0, 3))!;
    const after = taskView(S, 't1', frames.slice(0, 4))!;
    expect(after).toMatchObject({ state: 'working', reply: 'Looking.' });
    expect(taskView(S, 't1', frames)?.reply).toBe('Looking. Done.');
    expect(taskView(S, 't1', [...frames, response('t1', 3, 'Looking. Done.')])?.reply).toBe('Looking. Done.');
    // Streamed: the artifact is sent whole again (not appended), replacing what the client holds.
    expect(streamEvents(before, after, '1.0')).toEqual([
      {
        artifactUpdate: {
          taskId: after.id,
          contextId: S,
          artifact: { artifactId: 'reply', name: 'reply', parts: [{ text: 'Looking.' }] },
          append: false,
          lastChunk: false,
        },
      },
    ]);
  });

  it('given approval requests, when the turn says it waits, then input-required with all of them until every one is answered', () => {
    const frames = [
      user('t1', 1),
      asked('t1', 2, 'c1'),
      asked('t1', 3, 'c2'),
      waits('t1', 3, ['c1', 'c2']),
      answered('t1', 4, 'c1'),
      answered('t1', 5, 'c2'),
    ];
    // The first request alone is not yet input-required: its step asks another.
    expect(taskView(S, 't1', frames.slice(0, 2))).toMatchObject({ state: 'working', questions: [{ id: 'c1' }] });
    expect(taskView(S, 't1', frames.slice(0, 4))).toMatchObject({
      state: 'input-required',
      statusAt: at(3),
      questions: [
        { id: 'c1', kind: 'approval' },
        { id: 'c2', kind: 'approval' },
      ],
    });
    expect(taskView(S, 't1', frames.slice(0, 5))).toMatchObject({ state: 'input-required', questions: [{ id: 'c2' }] });
    const done = taskView(S, 't1', frames)!;
    expect(done.state).toBe('working');
    expect(done.statusText).toBeUndefined();
  });

  it('given an error, when folded, then canceled when it says cancelled, failed otherwise; nothing moves a final task', () => {
    expect(taskView(S, 't1', [user('t1', 1), failed('t1', 2, 'cancelled')])?.state).toBe('canceled');
    expect(taskView(S, 't1', [user('t1', 1), failed('t1', 2, 'timeout', 'model timed out')])).toMatchObject({
      state: 'failed',
      statusText: 'model timed out',
    });
    expect(taskView(S, 't1', [user('t1', 1), response('t1', 2, 'ok'), failed('t1', 3, 'late')])?.state).toBe(
      'completed',
    );
  });
});

describe('wire forms', () => {
  const view = taskView(S, 't1', [user('t1', 1, 'q'), response('t1', 2, 'answer')])!;
  it('v1.0 uses proto JSON names, v0.3 kinds', () => {
    expect(encodeTask(view, '1.0')).toEqual({
      id: taskIdOf(S, 't1'),
      contextId: S,
      status: { state: 'TASK_STATE_COMPLETED', timestamp: at(2) },
      artifacts: [{ artifactId: 'reply', name: 'reply', parts: [{ text: 'answer' }] }],
      history: [
        { messageId: 'ctx-1/t1#user', contextId: S, taskId: 'ctx-1/t1', role: 'ROLE_USER', parts: [{ text: 'q' }] },
        {
          messageId: 'ctx-1/t1#agent',
          contextId: S,
          taskId: 'ctx-1/t1',
          role: 'ROLE_AGENT',
          parts: [{ text: 'answer' }],
        },
      ],
    });
    expect(encodeTask(view, '0.3', 1)).toMatchObject({
      kind: 'task',
      status: { state: 'completed' },
      history: [{ kind: 'message', role: 'agent', parts: [{ kind: 'text', text: 'answer' }] }],
    });
  });

  it('a step becomes an appended artifact chunk and a status update', () => {
    const a = taskView(S, 't1', [user('t1', 1), chunk('t1', 1, 'ab')])!;
    const b = taskView(S, 't1', [user('t1', 1), chunk('t1', 1, 'ab'), response('t1', 2, 'abc')])!;
    expect(streamEvents(a, b, '0.3')).toEqual([
      {
        kind: 'artifact-update',
        taskId: b.id,
        contextId: S,
        artifact: { artifactId: 'reply', name: 'reply', parts: [{ kind: 'text', text: 'c' }] },
        append: true,
        lastChunk: true,
      },
      {
        kind: 'status-update',
        final: true,
        taskId: b.id,
        contextId: S,
        status: { state: 'completed', timestamp: at(2) },
      },
    ]);
  });

  it('reads the version header: 1.x is v1.0, anything else 0.3', () => {
    expect([versionOf('1.0'), versionOf(' 1 '), versionOf('0.3'), versionOf(undefined), versionOf('2.0')]).toEqual([
      '1.0',
      '1.0',
      '0.3',
      '0.3',
      '0.3',
    ]);
  });
});

describe('endpointOrigin', () => {
  const headers = { host: 'agent.local:8080', 'x-forwarded-host': 'agents.example.com', 'x-forwarded-proto': 'https' };
  it('uses the Host header; behind trusted proxies the forwarded host and scheme', () => {
    expect(endpointOrigin(headers, false)).toBe('http://agent.local:8080');
    expect(endpointOrigin(headers, true)).toBe('https://agents.example.com');
  });
  it('ignores a malformed forwarded host', () => {
    expect(endpointOrigin({ ...headers, 'x-forwarded-host': 'evil.com/path' }, true)).toBe('https://agent.local:8080');
  });
});
