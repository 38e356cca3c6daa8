/**
 * A session's commands decided against its state (src/agent/session/decide.ts), given/when/then: given
 * the stored events, when a command comes, then its decision or the error-table error that refuses it;
 * and what a session read from its log settles before anything runs. Then the calls' side of questions
 * (src/agent/questions/asked.ts): answered once the state says the question closed.
 */
import { describe, expect, it } from 'vitest';
import { createAsked } from '../../src/agent/questions/asked.ts';
import { decide, decideOpen, type Live, type SessionCommand } from '../../src/agent/session/decide.ts';
import { evolve, foldSession } from '../../src/agent/session/state.ts';
import type { SessionEvent, SessionEventOf } from '../../src/conversation/session-events.ts';
import type { ModelTool } from '../../src/conversation/tool-shapes.ts';
import type { TurnMessage } from '../../src/conversation/turn-contract.ts';
import { AppError } from '../../src/errors/index.ts';
import { createLogger } from '../../src/log/index.ts';
import { createArgsValidator } from '../../src/tools/args-validator.ts';

const v = 4 as const;
const EXPIRES = '2026-01-01T00:05:00.000Z';
const user = (turnId: string): SessionEvent => ({ v, type: 'userMessage', turnId, content: turnId });
const step = (turnId: string, ...ids: string[]): SessionEvent => ({
  v,
  type: 'assistantStep',
  turnId,
  text: '',
  model: 'm',
  toolCalls: ids.map((id) => ({ id, name: id, arguments: '{}' })),
});
const call = (turnId: string, callId: string): SessionEvent => ({
  v,
  type: 'toolCall',
  turnId,
  callId,
  toolName: callId,
  serverId: 'srv',
  args: {},
});
const approval = (turnId: string, callId: string): SessionEvent => ({
  v,
  type: 'questionAsked',
  turnId,
  question: { id: callId, kind: 'approval', callId, serverId: 'srv', toolName: callId, args: {}, expiresAt: EXPIRES },
});
const sampling = (turnId: string, id: string): SessionEvent => ({
  v,
  type: 'questionAsked',
  turnId,
  question: { id, kind: 'sampling', callId: 'c1', serverId: 'srv', args: {}, expiresAt: EXPIRES },
});
const elicitation = (turnId: string, id: string, expiresAt = EXPIRES): SessionEvent => ({
  v,
  type: 'questionAsked',
  turnId,
  question: {
    id,
    kind: 'elicitation',
    callId: 'c1',
    serverId: 'srv',
    message: 'Name?',
    mode: 'form',
    requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    expiresAt,
  },
});
const approved = (turnId: string, id: string): SessionEvent => ({
  v,
  type: 'questionClosed',
  turnId,
  id,
  answer: { decision: 'approve' },
  by: 'rest',
});
const queued = (turnId: string): SessionEvent => ({
  v,
  type: 'messageQueued',
  turnId,
  correlationId: `c-${turnId}`,
  content: turnId,
});
const result = (turnId: string, callId: string): SessionEvent => ({
  v,
  type: 'toolResult',
  turnId,
  callId,
  toolName: callId,
  serverId: 'srv',
  success: true,
  result: {},
  text: 'ok',
  durationMs: 1,
});
const message = (turnId: string): TurnMessage => ({ turnId, correlationId: `c-${turnId}`, content: turnId });

const validate = createArgsValidator(createLogger('silent'));
const idle: Live = {
  closedBy: undefined,
  queue: [],
  running: false,
  busy: false,
  held: new Set(['c1', 'sa_1', 'el_1']),
  validate,
  maxResultBytes: 1024,
  budgetAnsweredBy: 'admin',
};

function given(...events: SessionEvent[]) {
  const state = foldSession('s1', events);
  return {
    when: (command: SessionCommand, live: Partial<Live> = {}) => {
      const run = () => decide(command, state, { ...idle, ...live });
      return {
        then: (expected: unknown) => expect(run()).toEqual(expected),
        refused: (code: string, details?: Record<string, unknown>) => {
          let error: unknown;
          try {
            run();
          } catch (err) {
            error = err;
          }
          expect(error).toBeInstanceOf(AppError);
          expect(error).toMatchObject({ code, ...(details && { details: expect.objectContaining(details) }) });
        },
      };
    },
  };
}
const answer = (id: string, a: Extract<SessionCommand, { type: 'answer' }>['answer']): SessionCommand => ({
  type: 'answer',
  id,
  answer: a,
  by: 'rest',
});

describe('deciding a message', () => {
  it('starts a turn when idle with nothing waiting; waits (messageQueued) otherwise; a correlation id already here answers its turn', () => {
    given()
      .when({ type: 'send', message: message('t1') })
      .then({ type: 'start' });
    given(user('t1'))
      .when({ type: 'send', message: message('t2') }, { running: true, busy: true, queue: [message('t1')] })
      .then({
        type: 'queue',
        event: { v, type: 'messageQueued', turnId: 't2', correlationId: 'c-t2', content: 't2' },
      });
    given()
      .when(
        { type: 'send', message: { ...message('t9'), correlationId: 'c-t1' } },
        { running: true, busy: true, queue: [message('t1')] },
      )
      .then({ type: 'duplicate', turnId: 't1', queued: false });
  });

  it('a closed session takes no message, reset or compaction, and cancels nothing', () => {
    const closed = { closedBy: 'evicted' };
    given()
      .when({ type: 'send', message: message('t1') }, closed)
      .refused('AGENT_ERROR', { reason: 'evicted' });
    given().when({ type: 'reset' }, closed).refused('AGENT_ERROR');
    given().when({ type: 'compact' }, closed).refused('AGENT_ERROR');
    given()
      .when({ type: 'cancel' }, { ...closed, running: true })
      .then({ type: 'ignore' });
    given().when({ type: 'cancel' }, { running: true }).then({ type: 'cancel' });
  });
});

describe('deciding an answer: one path for every kind', () => {
  const open = [user('t1'), approval('t1', 'c1'), sampling('t1', 'sa_1'), elicitation('t1', 'el_1')];

  it("answers a pending question of the answer's family with the answer the kind takes", () => {
    given(...open)
      .when(answer('c1', { decision: 'deny', reason: 'no' }))
      .then(
        expect.objectContaining({
          type: 'answer',
          question: expect.objectContaining({ kind: 'approval' }),
          answer: { decision: 'deny', reason: 'no' },
        }),
      );
    given(...open)
      .when(answer('sa_1', { decision: 'approve' }))
      .then(
        expect.objectContaining({
          question: expect.objectContaining({ kind: 'sampling' }),
          answer: { decision: 'approve' },
        }),
      );
    given(...open)
      .when(answer('el_1', { action: 'accept', content: { name: 'Ada' } }))
      .then(expect.objectContaining({ answer: { action: 'accept', content: { name: 'Ada' } } }));
  });

  it('refuses by family: unknown or of the other family, not found; closed in the log or by the turn, already resolved', () => {
    given(...open)
      .when(answer('zzz', { decision: 'approve' }))
      .refused('APPROVAL_NOT_FOUND', { callId: 'zzz' });
    given(...open)
      .when(answer('el_1', { decision: 'approve' }))
      .refused('APPROVAL_NOT_FOUND');
    given(...open)
      .when(answer('c1', { action: 'cancel' }))
      .refused('ELICITATION_NOT_FOUND', { id: 'c1' });
    given(...open, approved('t1', 'c1'))
      .when(answer('c1', { decision: 'approve' }))
      .refused('APPROVAL_ALREADY_RESOLVED');
    given(...open)
      .when(answer('sa_1', { decision: 'approve' }), { held: new Set(['c1']) })
      .refused('APPROVAL_ALREADY_RESOLVED'); // the turn closed it: not stored yet
    given(...open, { v, type: 'turnFailed', turnId: 't1', code: 'AGENT_ERROR', message: 'x', details: {} })
      .when(answer('el_1', { action: 'decline' }))
      .refused('ELICITATION_ALREADY_RESOLVED');
  });

  it("cuts a client tool's result and error to maxResultBytes, as every tool result the model reads", () => {
    const asked: SessionEvent = {
      v,
      type: 'questionAsked',
      turnId: 't1',
      question: {
        id: 'ct_1',
        kind: 'clientTool',
        callId: 'ct_1',
        serverId: 'client',
        toolName: 'pick',
        args: {},
        expiresAt: EXPIRES,
      },
    };
    const big = 'y'.repeat(5000);
    const d = decide(answer('ct_1', { content: big, error: big }), foldSession('s1', [user('t1'), asked]), {
      ...idle,
      held: new Set(['ct_1']),
    }) as { answer: { content: string; error: string } };
    for (const text of [d.answer.content, d.answer.error]) {
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(idle.maxResultBytes);
      expect(text).toMatch(/^y+\n\[\.\.\. truncated \d+ bytes by agentd\]$/);
    }
  });

  it("checks a form's content against its schema, naming the field; a closed session finds nothing", () => {
    given(...open)
      .when(answer('el_1', { action: 'accept', content: {} }))
      .refused('INVALID_REQUEST', { field: 'name' });
    given(...open)
      .when(answer('el_1', { action: 'decline' }), { closedBy: 'deleted' })
      .refused('ELICITATION_NOT_FOUND');
    given(...open)
      .when(answer('c1', { decision: 'approve' }), { closedBy: 'deleted' })
      .refused('APPROVAL_NOT_FOUND');
  });
});

describe('deciding what a log left open', () => {
  const now = Date.parse('2026-01-01T00:00:00.000Z');

  it('closes by restart the questions whose asker died with the process; the approval is resumed with its turn', () => {
    const state = foldSession('s1', [
      user('t1'),
      step('t1', 'c1', 'c2'),
      call('t1', 'c1'),
      approval('t1', 'c1'),
      call('t1', 'c2'),
      sampling('t1', 'sa_1'),
      elicitation('t1', 'el_1'),
      queued('t2'),
    ]);
    const opening = decideOpen(state, { now });
    expect(opening.record).toEqual([
      {
        v,
        type: 'questionClosed',
        turnId: 't1',
        id: 'sa_1',
        answer: { decision: 'deny', reason: "the server's request ended with the process" },
        by: 'restart',
      },
      { v, type: 'questionClosed', turnId: 't1', id: 'el_1', answer: { action: 'cancel' }, by: 'restart' },
    ]);
    expect(opening.resume?.resume?.awaiting.map((c) => c.callId)).toEqual(['c1']);
    expect(opening.resume?.resume?.interrupted.map((c) => c.callId)).toEqual(['c2']);
    expect(opening.requeue.map((m) => m.turnId)).toEqual(['t2']);
  });

  it('given a turn waiting for approval whose other call ran as a recorded task, that call is polled again, not interrupted', () => {
    const state = foldSession('s1', [
      user('t1'),
      step('t1', 'c1', 'c2', 'c3'),
      call('t1', 'c1'),
      approval('t1', 'c1'),
      call('t1', 'c2'),
      { v, type: 'toolTask', turnId: 't1', callId: 'c2', taskId: 'task-1' },
      call('t1', 'c3'),
    ]);
    const resume = decideOpen(state, { now }).resume?.resume;
    expect(resume?.awaiting.map((c) => c.callId)).toEqual(['c1']);
    expect(resume?.rerun?.map((c) => [c.callId, c.task])).toEqual([['c2', { taskId: 'task-1' }]]);
    expect(resume?.interrupted.map((c) => c.callId)).toEqual(['c3']);
  });

  it('ends a turn left running when its runner is known to be gone, and only then', () => {
    const state = foldSession('s1', [user('t1'), step('t1', 'c1'), call('t1', 'c1')]);
    expect(decideOpen(state, { now }).record).toEqual([]);
    expect(decideOpen(state, { now, orphanedTurnReason: 'owner_died' }).record).toEqual([
      {
        v,
        type: 'turnFailed',
        turnId: 't1',
        code: 'AGENT_ERROR',
        message: 'The turn was stopped: the instance running it stopped before it ended',
        details: { reason: 'owner_died' },
      },
    ]);
  });
});

describe('deciding a turn its process left running (resumeTurns)', () => {
  const now = Date.parse('2026-01-01T00:00:00.000Z');
  const safeCall = (turnId: string, callId: string): SessionEvent => ({
    ...(call(turnId, callId) as SessionEventOf<'toolCall'>),
    rerunSafe: true,
  });
  const said = (turnId: string, text: string): SessionEvent => ({
    v,
    type: 'assistantStep',
    turnId,
    text,
    model: 'm',
    toolCalls: [],
  });
  const resumed = (turnId: string, attempt: number): SessionEvent => ({
    v,
    type: 'turnResumed',
    turnId,
    attempt,
    reply: '',
  });

  it('given a model step cut short, its turn resumes under its own id at the next step, recorded as turnResumed first', () => {
    const state = foldSession('s1', [user('t1'), said('t1', 'Looking.'), result('t1', 'x'), queued('t2')]);
    const opening = decideOpen(state, { now, resumeTurns: 3 });
    expect(opening.record).toEqual([{ v, type: 'turnResumed', turnId: 't1', attempt: 1, reply: 'Looking.' }]);
    expect(opening.resume).toMatchObject({ turnId: 't1', correlationId: 't1', content: 't1' });
    expect(opening.resume?.resume).toMatchObject({
      iteration: 1,
      reply: 'Looking.',
      lastText: 'Looking.',
      awaiting: [],
      rerun: [],
      interrupted: [],
    });
    expect(opening.requeue.map((m) => m.turnId)).toEqual(['t2']);
  });

  it('given calls without a result, runs again only those whose tool said it is safe; the others (and one never stored) are interrupted', () => {
    const state = foldSession('s1', [
      user('t1'),
      step('t1', 'safe', 'unsafe', 'done', 'unstored'),
      safeCall('t1', 'safe'),
      call('t1', 'unsafe'),
      call('t1', 'done'),
      result('t1', 'done'),
    ]);
    const resume = decideOpen(state, { now, resumeTurns: 3 }).resume?.resume;
    expect(resume?.rerun?.map((c) => [c.callId, c.rerunSafe])).toEqual([['safe', true]]);
    expect(resume?.interrupted.map((c) => c.callId)).toEqual(['unsafe', 'unstored']);
    expect(resume?.unannounced?.map((c) => c.callId)).toEqual(['unstored']);
    expect(resume?.iteration).toBe(1);
  });

  it('given a call of a tool not safe to repeat whose server recorded a task, runs it again with that task to poll, not as interrupted', () => {
    const task: SessionEvent = {
      v,
      type: 'toolTask',
      turnId: 't1',
      callId: 'tasked',
      taskId: 'task-1',
      mcpSessionId: 'm1',
    };
    const settled: SessionEvent = { v, type: 'toolTask', turnId: 't1', callId: 'done', taskId: 'task-2' };
    const state = foldSession('s1', [
      user('t1'),
      step('t1', 'tasked', 'unsafe', 'done'),
      call('t1', 'tasked'),
      task,
      call('t1', 'unsafe'),
      call('t1', 'done'),
      settled,
      result('t1', 'done'),
    ]);
    const resume = decideOpen(state, { now, resumeTurns: 3 }).resume?.resume;
    expect(resume?.rerun?.map((c) => [c.callId, c.rerunSafe, c.task])).toEqual([
      ['tasked', undefined, { taskId: 'task-1', mcpSessionId: 'm1' }],
    ]);
    expect(resume?.interrupted.map((c) => [c.callId, c.task])).toEqual([['unsafe', undefined]]);
  });

  it('counts its resumptions in the log: past the bound it ends as owner_lost (or the reason its runner is gone)', () => {
    const log = [user('t1'), resumed('t1', 1), resumed('t1', 2)];
    expect(decideOpen(foldSession('s1', log), { now, resumeTurns: 3 }).record).toEqual([
      { v, type: 'turnResumed', turnId: 't1', attempt: 3, reply: '' },
    ]);
    const spent = foldSession('s1', [...log, resumed('t1', 3)]);
    const opening = decideOpen(spent, { now, resumeTurns: 3 });
    expect(opening.resume).toBeUndefined();
    expect(opening.record).toEqual([
      expect.objectContaining({
        type: 'turnFailed',
        turnId: 't1',
        code: 'AGENT_ERROR',
        details: { reason: 'owner_lost' },
      }),
    ]);
    expect(decideOpen(spent, { now, resumeTurns: 3, orphanedTurnReason: 'owner_died' }).record).toEqual([
      expect.objectContaining({ type: 'turnFailed', details: { reason: 'owner_died' } }),
    ]);
    // A turnResumed of another turn, or one before a reset, counts for nothing.
    const other = foldSession('s1', [user('t0'), resumed('t0', 3), { v, type: 'reset' }, user('t1')]);
    expect(decideOpen(other, { now, resumeTurns: 3 }).record).toEqual([
      { v, type: 'turnResumed', turnId: 't1', attempt: 1, reply: '' },
    ]);
  });

  it('with resuming off, keeps what it did before; a turn waiting for approval resumes as before, recording nothing', () => {
    const running = foldSession('s1', [user('t1'), step('t1', 'c1'), call('t1', 'c1')]);
    expect(decideOpen(running, { now, resumeTurns: 0 })).toMatchObject({ record: [], resume: undefined });
    const waiting = foldSession('s1', [user('t1'), step('t1', 'c1'), call('t1', 'c1'), approval('t1', 'c1')]);
    const opening = decideOpen(waiting, { now, resumeTurns: 3 });
    expect(opening.record).toEqual([]);
    expect(opening.resume?.resume?.awaiting.map((c) => c.callId)).toEqual(['c1']);
  });
});

describe("a call's questions, from the call's side", () => {
  const setup = (took = true) => {
    const handed: string[] = [];
    const ended: string[] = [];
    const asked = createAsked({
      sessionId: 's1',
      clock: { now: () => 0 },
      timeoutMs: 10_000,
      toTurn: (q) => (handed.push(q.id), took),
      callEnded: (id) => void ended.push(id),
    });
    return { asked, handed, ended };
  };
  const form = {
    kind: 'elicitation' as const,
    serverId: 'srv',
    message: 'Name?',
    mode: 'form' as const,
    requestedSchema: { type: 'object' },
  };
  const ref = { turnId: 't1', callId: 'c1' };

  it("waits until the state says its question closed, then answers what was recorded; expiresAt is capped by the call's deadline", async () => {
    const { asked, handed } = setup();
    const answered = asked.ask(form, ref, { deadline: 5_000, signal: new AbortController().signal });
    const id = handed[0]!;
    expect(id).toMatch(/^el_/);
    const state = foldSession('s1', [user('t1')]);
    const store = (event: SessionEvent) =>
      asked.settle(evolve(state, { seq: state.lastSeq + 1, event }), { seq: state.lastSeq, event });
    store(elicitation('t1', id, new Date(4_000).toISOString()));
    store({
      v,
      type: 'questionClosed',
      turnId: 't1',
      id,
      answer: { action: 'accept', content: { name: 'Ada' } },
      by: 'rest',
    });
    await expect(answered).resolves.toEqual({ action: 'accept', content: { name: 'Ada' } });
  });

  it('is answered at once, nothing asked, when no turn takes it or the call already ended; when the call ends first, the turn is told', async () => {
    await expect(
      setup(false).asked.ask(form, ref, { deadline: 60_000, signal: new AbortController().signal }),
    ).resolves.toEqual({ action: 'decline' });
    await expect(
      setup().asked.ask({ kind: 'sampling', serverId: 'srv', args: {} }, ref, {
        deadline: 60_000,
        signal: AbortSignal.abort(),
      }),
    ).resolves.toMatchObject({ decision: 'deny' });
    const { asked, handed, ended } = setup();
    void asked.ask({ kind: 'sampling', serverId: 'srv', args: {} }, ref, {
      deadline: 60_000,
      signal: new AbortController().signal,
    });
    expect(handed.pop()).toMatch(/^c1~sampling-[0-9a-f]{8}$/); // the id the wire documents for a sampling request
    const ending = new AbortController();
    const answered = asked.ask(form, ref, { deadline: 60_000, signal: ending.signal });
    ending.abort();
    await expect(answered).resolves.toEqual({ action: 'cancel' });
    expect(ended).toEqual(handed);
  });

  it('a closed session answers every waiting question and asks no more', async () => {
    const { asked } = setup();
    const waiting = asked.ask({ kind: 'sampling', serverId: 'srv', args: {} }, ref, {
      deadline: 60_000,
      signal: new AbortController().signal,
    });
    asked.close();
    await expect(waiting).resolves.toMatchObject({ decision: 'deny' });
    await expect(asked.ask(form, ref, { deadline: 60_000, signal: new AbortController().signal })).resolves.toEqual({
      action: 'decline',
    });
  });

  it('given a turn whose end was lost (the next turn started), when the session opens, then it ends that turn once, as a storage failure', () => {
    const now = Date.parse('2026-01-01T00:00:00.000Z');
    const state = foldSession('s1', [user('t1'), step('t1', 'c1'), call('t1', 'c1'), user('t2')]);
    const ended: SessionEvent = {
      v,
      type: 'turnFailed',
      turnId: 't1',
      code: 'AGENT_ERROR',
      message: 'The turn ended, but its end could not be stored',
      details: { reason: 'storage' },
    };
    expect(decideOpen(state, { now }).record).toEqual([ended]);
    expect(decideOpen(foldSession('s1', [user('t1'), user('t2'), ended]), { now }).record).toEqual([]);
    // A retry of the running turn's own message is no new turn: nothing is lost.
    expect(decideOpen(foldSession('s1', [user('t1'), user('t1')]), { now }).record).toEqual([]);
  });
});

describe("an MCP App's call (a turn whose one step is the app's call)", () => {
  const now = Date.parse('2026-01-01T00:00:00.000Z');
  const appUser = (turnId: string): SessionEvent => ({
    v,
    type: 'userMessage',
    turnId,
    content: '',
    appCallId: 'shown',
  });
  const appStep = (turnId: string, callId: string): SessionEvent => ({
    ...(step(turnId, callId) as SessionEventOf<'assistantStep'>),
    model: 'app',
  });
  const appCall = (turnId: string, callId: string): SessionEvent => ({
    ...(call(turnId, callId) as SessionEventOf<'toolCall'>),
    appCallId: 'shown',
  });
  const appResult = (turnId: string, callId: string): SessionEvent => ({
    ...(result(turnId, callId) as SessionEventOf<'toolResult'>),
    appCallId: 'shown',
  });
  const shown = (serverId: string, app: SessionEventOf<'toolResult'>['app']): SessionEvent => ({
    ...(result('t0', 'shown') as SessionEventOf<'toolResult'>),
    serverId,
    ...(app && { app }),
  });
  const kept = { resourceUri: 'ui://charts/view', mimeType: 'text/html;profile=mcp-app' as const, html: '<p>' };
  const tool = (serverId: string): ModelTool => ({
    name: `${serverId}--refresh`,
    description: '',
    parameters: { type: 'object' },
    serverId,
    toolName: 'refresh',
  });
  const appCallOf = (turnId: string, tools = [tool('charts')], appCallId = 'shown'): SessionCommand => ({
    type: 'appCall',
    correlationId: `c-${turnId}`,
    request: { turnId, appCallId, callId: `call-${turnId}`, name: 'refresh', args: { n: 1 }, tools },
  });
  const decided = (turnId: string, serverId = 'charts') => ({
    type: 'appCall',
    message: {
      turnId,
      correlationId: `c-${turnId}`,
      content: '',
      app: { appCallId: 'shown', call: { callId: `call-${turnId}`, tool: tool(serverId), args: { n: 1 } } },
    },
  });

  it("runs as a turn of its own with its app's server's tool, behind a running one without being stored; a closed session takes none", () => {
    given(shown('charts', kept))
      .when(appCallOf('a1', [tool('other'), tool('charts')]))
      .then(decided('a1'));
    given(shown('charts', kept), user('t1'))
      .when(appCallOf('a1'), { running: true, busy: true, queue: [message('t1')] })
      .then(decided('a1'));
    given(shown('charts', kept))
      .when(appCallOf('a1'), { closedBy: 'moved' })
      .refused('AGENT_ERROR', { reason: 'moved' });
  });

  it('given no app kept with the call (no result of it, a note, or a later result without one), it is APP_NOT_FOUND', () => {
    given().when(appCallOf('a1')).refused('APP_NOT_FOUND', { callId: 'shown' });
    given(shown('charts', kept))
      .when(appCallOf('a1', [tool('charts')], 'other'))
      .refused('APP_NOT_FOUND');
    given(shown('charts', { resourceUri: 'ui://charts/view', note: 'too large' }))
      .when(appCallOf('a1'))
      .refused('APP_NOT_FOUND');
    given(shown('charts', kept), shown('charts', undefined)).when(appCallOf('a1')).refused('APP_NOT_FOUND');
  });

  it("given a tool of another server only, or none that apps may call, it is FORBIDDEN app_tool, naming the app's server", () => {
    given(shown('charts', kept))
      .when(appCallOf('a1', [tool('other')]))
      .refused('FORBIDDEN', { reason: 'app_tool', serverId: 'charts', name: 'refresh' });
    given(shown('charts', kept)).when(appCallOf('a1', [])).refused('FORBIDDEN', { reason: 'app_tool' });
  });

  it('given a reset, or a session read from its compaction (whose event carries its apps), the app is still kept', () => {
    given(shown('charts', kept), { v, type: 'reset' }).when(appCallOf('a1')).then(decided('a1'));
    const compacted: SessionEvent = {
      v,
      type: 'contextCompacted',
      method: 'clearToolResults',
      trigger: 'manual',
      upToSeq: 1,
      readFrom: 3,
      tokensBefore: 10,
      tokensAfter: 5,
      usageTotal: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      apps: { shown: 'charts' },
    };
    given(user('t2'), compacted).when(appCallOf('a1')).then(decided('a1'));
  });

  it('given its call settled, its turn is over (no reply): nothing is resumed or ended at open', () => {
    const state = foldSession('s1', [appUser('a1'), appStep('a1', 'c1'), appCall('a1', 'c1'), appResult('a1', 'c1')]);
    expect(state.openTurn).toBeUndefined();
    expect(decideOpen(state, { now, resumeTurns: 3, orphanedTurnReason: 'owner_lost' })).toEqual({
      record: [],
      resume: undefined,
      requeue: [],
    });
  });

  it('given its call left running, it resumes as the app’s, the call interrupted (not safe to repeat), never asked again', () => {
    const state = foldSession('s1', [appUser('a1'), appStep('a1', 'c1'), appCall('a1', 'c1')]);
    const opening = decideOpen(state, { now, resumeTurns: 3 });
    expect(opening.resume).toMatchObject({ turnId: 'a1', app: { appCallId: 'shown' } });
    expect(opening.resume?.resume?.interrupted).toEqual([
      expect.objectContaining({ callId: 'c1', appCallId: 'shown' }),
    ]);
    expect(opening.resume?.resume?.rerun).toEqual([]);
  });

  it('given its call waiting for approval, it resumes waiting, as the app’s', () => {
    const state = foldSession('s1', [appUser('a1'), appStep('a1', 'c1'), appCall('a1', 'c1'), approval('a1', 'c1')]);
    const opening = decideOpen(state, { now });
    expect(opening.resume).toMatchObject({ turnId: 'a1', app: { appCallId: 'shown' } });
    expect(opening.resume?.resume?.awaiting).toEqual([
      expect.objectContaining({ callId: 'c1', needsApproval: true, appCallId: 'shown' }),
    ]);
  });

  it("its history: no user message; the step's call and its result, as a model's would be", () => {
    const state = foldSession('s1', [
      user('t1'),
      appUser('a1'),
      appStep('a1', 'c1'),
      appCall('a1', 'c1'),
      appResult('a1', 'c1'),
    ]);
    expect(state.history.messages().map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(state.history.messages()[1]).toMatchObject({ toolCalls: [{ id: 'c1' }] });
  });
});
