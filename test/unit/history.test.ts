import { describe, expect, it } from 'vitest';
import {
  createHistory,
  failedToolResult,
  INTERRUPTED_TOOL_RESULT,
  projectHistory,
} from '../../src/agent/session/history.ts';
import type { ChatMessage, ImagePart, ToolCallRequest } from '../../src/llm/types.ts';
import type { SessionEvent as DomainEvent, SessionEventOf } from '../../src/conversation/session-events.ts';

// ---- event builders -------------------------------------------------------------------------

const userMsg = (content: string, turnId = 't1', image?: ImagePart): DomainEvent =>
  image ? { v: 4, type: 'userMessage', turnId, content, image } : { v: 4, type: 'userMessage', turnId, content };
const call = (id: string, name = 'echo'): ToolCallRequest => ({ id, name, arguments: `{"id":"${id}"}` });
const asked = (turnId: string, ...calls: ToolCallRequest[]): DomainEvent => ({
  v: 4,
  type: 'assistantStep',
  turnId,
  text: '',
  toolCalls: calls,
  model: 'm',
});
const replied = (content: string, turnId = 't1'): DomainEvent => ({
  v: 4,
  type: 'response',
  turnId,
  content,
  text: content,
  model: 'm',
});
const toolCall = (callId: string, turnId = 't1'): DomainEvent => ({
  v: 4,
  type: 'toolCall',
  turnId,
  callId,
  toolName: 'echo',
  serverId: 's',
  args: {},
});
const toolResult = (callId: string, result: string, turnId = 't1'): DomainEvent => ({
  v: 4,
  type: 'toolResult',
  turnId,
  callId,
  toolName: 'echo',
  serverId: 's',
  success: true,
  result: { text: result },
  text: result,
  durationMs: 1,
});
const failed = (turnId: string, cancelled = false): SessionEventOf<'turnFailed'> => ({
  v: 4,
  type: 'turnFailed',
  turnId,
  code: 'AGENT_ERROR',
  message: 'model timed out',
  details: {},
  ...(cancelled ? { cancelled } : {}),
});
const reset: DomainEvent = { v: 4, type: 'reset' };

const u = (content: string, image?: ImagePart): ChatMessage =>
  image ? { role: 'user', content, image } : { role: 'user', content };
const a = (content: string, toolCalls?: ToolCallRequest[]): ChatMessage =>
  toolCalls ? { role: 'assistant', content, toolCalls } : { role: 'assistant', content };
const tool = (toolCallId: string, content: string): ChatMessage => ({ role: 'tool', toolCallId, content });

// ---- given / when / then ---------------------------------------------------------------------

/** What the OpenAI API demands of tool calls: each answered once, before any other message. */
function expectValidForOpenAI(messages: readonly ChatMessage[]): void {
  const open = new Set<string>();
  for (const m of messages) {
    if (m.role === 'tool') {
      expect(open.delete(m.toolCallId), `tool message ${m.toolCallId} answers an open call`).toBe(true);
      continue;
    }
    expect([...open], `calls answered before a ${m.role} message`).toEqual([]);
    if (m.role === 'assistant') for (const c of m.toolCalls ?? []) open.add(c.id);
  }
}

/**
 * Both forms of the projection must agree, and the (completed) history must be valid. A preview of
 * `events` on the history after `past` must be what applying them appends (or undefined past a
 * reset), and leave that history as it was.
 */
function given(...past: DomainEvent[]) {
  return {
    when: (...events: DomainEvent[]) => ({
      then(expected: ChatMessage[]) {
        const all = [...past, ...events];
        const history = createHistory();
        for (const e of all) history.apply(e);
        expect(projectHistory(all)).toEqual(expected);
        expect(history.messages()).toEqual(expected);
        expectValidForOpenAI(expected);

        const before = createHistory();
        for (const e of past) before.apply(e);
        const kept = [...before.messages()];
        const ahead = before.preview(events);
        if (events.some((e) => e.type === 'reset' || e.type === 'contextCompacted')) expect(ahead).toBeUndefined();
        else expect([...kept, ...(ahead ?? [])]).toEqual(expected);
        expect(before.messages()).toEqual(kept);
      },
    }),
  };
}

// ---- specs -----------------------------------------------------------------------------------

const png: ImagePart = { mimeType: 'image/png', base64: 'iVBORw0KGgo=' };

describe('history projection', () => {
  it('starts empty', () => {
    given().when().then([]);
  });

  it('turns a user message and the final reply into user and assistant messages', () => {
    given()
      .when(userMsg('hi'), replied('hello'))
      .then([u('hi'), a('hello')]);
  });

  it('keeps the image of a user message', () => {
    given()
      .when(userMsg('what is this?', 't1', png), replied('a pixel'))
      .then([u('what is this?', png), a('a pixel')]);
  });

  it('carries a tool round trip: calls on the assistant message, results as tool messages', () => {
    given(userMsg('add'))
      .when(
        asked('t1', call('c1'), call('c2')),
        toolCall('c1'),
        toolCall('c2'),
        toolResult('c2', '2'),
        toolResult('c1', '1'),
        replied('3'),
      )
      .then([u('add'), a('', [call('c1'), call('c2')]), tool('c2', '2'), tool('c1', '1'), a('3')]);
  });

  it('treats toolCall events as audit only', () => {
    given(userMsg('x'))
      .when(toolCall('c9'))
      .then([u('x')]);
  });

  it('omits an empty toolCalls list', () => {
    const empty: DomainEvent = { v: 4, type: 'assistantStep', turnId: 't1', text: 'ok', toolCalls: [], model: 'm' };
    given(userMsg('x'))
      .when(empty)
      .then([u('x'), a('ok')]);
  });

  it('keeps the last step text of a response, not the whole reply the client saw', () => {
    const response: DomainEvent = {
      v: 4,
      type: 'response',
      turnId: 't1',
      content: 'step one\n\nstep two',
      text: 'step two',
      model: 'm',
    };
    given(userMsg('x'), asked('t1', call('c1')), toolResult('c1', 'r'))
      .when(response)
      .then([u('x'), a('', [call('c1')]), tool('c1', 'r'), a('step two')]);
  });

  it('marks the result of a tool that failed, so an API that can say so does', () => {
    given(userMsg('x'), asked('t1', call('c1')))
      .when({ ...toolResult('c1', 'boom'), success: false } as DomainEvent)
      .then([u('x'), a('', [call('c1')]), { role: 'tool', toolCallId: 'c1', content: 'boom', isError: true }]);
  });

  it('starts over after a reset', () => {
    given(userMsg('old'), replied('old reply'), reset)
      .when(userMsg('new', 't2'))
      .then([u('new')]);
    given(userMsg('old'), replied('old reply')).when(reset).then([]);
    given(userMsg('1'), reset, userMsg('2', 't2'), reset)
      .when(userMsg('3', 't3'), replied('three', 't3'))
      .then([u('3'), a('three')]);
  });

  it('forgets calls left open when a reset comes', () => {
    given(userMsg('x'), asked('t1', call('c1')), reset)
      .when(userMsg('y', 't2'), toolResult('c1', 'late'))
      .then([u('y')]);
  });

  it('keeps the user message of a turn that failed before the model answered', () => {
    given(userMsg('first'), failed('t1'))
      .when(userMsg('try again', 't2'), replied('done', 't2'))
      .then([u('first'), u('try again'), a('done')]);
  });

  it('answers the calls a failed turn left open, and keeps the results it had', () => {
    given(userMsg('go'), asked('t1', call('c1'), call('c2')), toolResult('c1', 'one'))
      .when(failed('t1'))
      .then([u('go'), a('', [call('c1'), call('c2')]), tool('c1', 'one'), tool('c2', failedToolResult(failed('t1')))]);
    expect(failedToolResult(failed('t1'))).toMatch(/^error: .*failed.*AGENT_ERROR/);
  });

  it('answers the calls a cancelled turn left open, saying it was cancelled', () => {
    given(userMsg('go'), asked('t1', call('c1')))
      .when(failed('t1', true), userMsg('never mind', 't2'))
      .then([
        u('go'),
        a('', [call('c1')]),
        tool('c1', 'error: the turn was cancelled before the tool returned'),
        u('never mind'),
      ]);
  });

  it('drops a tool result that arrives after its turn failed', () => {
    given(userMsg('go'), asked('t1', call('c1')), failed('t1', true))
      .when(toolResult('c1', 'late'))
      .then([u('go'), a('', [call('c1')]), tool('c1', 'error: the turn was cancelled before the tool returned')]);
  });

  it('answers calls of a turn that ended with no record (a crash) before the next message', () => {
    given(userMsg('go'), asked('t1', call('c1')))
      .when(userMsg('hello?', 't2'))
      .then([u('go'), a('', [call('c1')]), tool('c1', INTERRUPTED_TOOL_RESULT), u('hello?')]);
  });

  it('drops tool results for unknown or already answered calls', () => {
    given(userMsg('go'), asked('t1', call('c1')), toolResult('c1', 'one'))
      .when(toolResult('c1', 'again'), toolResult('zz', 'stray'), replied('ok'))
      .then([u('go'), a('', [call('c1')]), tool('c1', 'one'), a('ok')]);
  });
});

describe('incremental history', () => {
  it('hands out its view without copying, and the view follows later applies', () => {
    const history = createHistory();
    history.apply(userMsg('1'));
    const view = history.messages();
    expect(history.messages()).toBe(view);
    history.apply(replied('one'));
    expect(view).toEqual([u('1'), a('one')]);
  });

  it('leaves a view taken before a reset as it was', () => {
    const history = createHistory();
    history.apply(userMsg('1'));
    const before = history.messages();
    history.apply(reset);
    history.apply(userMsg('2', 't2'));
    expect(before).toEqual([u('1')]);
    expect(history.messages()).toEqual([u('2')]);
  });

  // Structural, not timed (a wall-clock bound failed on CI's busy machine): each event extends the one kept view in
  // place, so a long history is never projected again; the speed itself is the turns benchmark's (bench/).
  it('extends one kept view per event however long the history is, never projecting it again', () => {
    const history = createHistory();
    for (let i = 0; i < 20_000; i++) history.apply(i % 2 ? replied(`r${i}`, `t${i}`) : userMsg(`m${i}`, `t${i}`));
    const view = history.messages();
    const first = view[0];
    for (let i = 0; i < 1_000; i++) {
      history.apply(userMsg(`more${i}`));
      expect(history.messages()).toBe(view);
      expect(view).toHaveLength(20_001 + i);
    }
    expect(view[0]).toBe(first);
    expect(view.at(-1)).toEqual(u('more999'));
  });
});

// ---- the durable queue: messageQueued ----------------------------------------------------------

const queuedMsg = (content: string, turnId: string): DomainEvent => ({
  v: 4,
  type: 'messageQueued',
  turnId,
  correlationId: `c-${turnId}`,
  content,
});
const discarded = (turnId: string, reason: string): DomainEvent => ({
  v: 4,
  type: 'turnFailed',
  turnId,
  code: 'AGENT_ERROR',
  message: `message discarded before its turn started (${reason})`,
  details: { reason },
  cancelled: true,
});

describe('history projection of queued messages', () => {
  it('leaves a queued message out until its turn starts', () => {
    given(userMsg('first'))
      .when(queuedMsg('second', 't2'))
      .then([u('first')]);
  });

  it('has a queued message from its userMessage on, once (queued then started)', () => {
    given(userMsg('first'), queuedMsg('second', 't2'), replied('one'))
      .when(userMsg('second', 't2'), replied('two', 't2'))
      .then([u('first'), a('one'), u('second'), a('two')]);
  });

  it('keeps a queued message that a reset discarded out', () => {
    given(userMsg('first'), queuedMsg('second', 't2'))
      .when(discarded('t2', 'reset'), reset, userMsg('third', 't3'))
      .then([u('third')]);
  });

  it('does not let a discarded queued message answer the running turn’s open calls', () => {
    given(userMsg('x'), asked('t1', call('c1')), queuedMsg('y', 't2'))
      .when(discarded('t2', 'shutdown'), toolResult('c1', 'real'), replied('done'))
      .then([u('x'), a('', [call('c1')]), tool('c1', 'real'), a('done')]);
  });
});

describe('reasoning', () => {
  const thought = (text: string, turnId = 't1'): DomainEvent => ({
    v: 4,
    type: 'reasoning',
    turnId,
    model: 'm',
    endpoint: 'http://models.example/v1',
    api: 'messages',
    text,
    replay: [{ type: 'thinking', thinking: text, signature: 'sig' }],
  });

  it('goes with the assistant message it preceded, and with no other, naming the model and endpoint it came from', () => {
    const history = projectHistory([
      userMsg('hi'),
      thought('call echo'),
      asked('t1', call('c1')),
      toolResult('c1', 'ok'),
      thought('answer now'),
      replied('done'),
      userMsg('again'),
      replied('plain'),
    ]);
    const assistants = history.filter((m) => m.role === 'assistant');
    expect(assistants.map((m) => m.reasoning?.text)).toEqual(['call echo', 'answer now', undefined]);
    expect(assistants[0]).toMatchObject({
      toolCalls: [call('c1')],
      reasoning: {
        api: 'messages',
        model: 'm',
        endpoint: 'http://models.example/v1',
        replay: [{ type: 'thinking', thinking: 'call echo', signature: 'sig' }],
      },
    });
  });

  it('is forgotten by a reset or a new user message before any step took it', () => {
    const history = projectHistory([userMsg('hi'), thought('lost'), reset, userMsg('fresh'), replied('ok')]);
    expect(history.at(-1)).toEqual({ role: 'assistant', content: 'ok' });
    const preview = createHistory();
    preview.apply(userMsg('hi'));
    preview.apply(thought('kept'));
    expect(preview.preview([replied('done')])?.[0]).toMatchObject({ reasoning: { text: 'kept' } });
  });
});
