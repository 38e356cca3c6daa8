/**
 * The console's transcript as a pure fold of frames (web/console/transcript.js), without a
 * browser: given frames, then state. Live and replayed frames fold alike; a durable frame already
 * seen changes nothing, so a reconnect that resumes with `since` and overlaps adds no duplicate.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  answeredBy,
  fold,
  foldAll,
  initialState,
  sessionView,
  type ConsoleFrame,
} from '../../web/console/transcript.js';
import { backoffDelay, BACKOFF } from '../../web/shared/backoff.js';
import { ROOT } from '../support/paths.ts';

const S = 'default';
const user = (seq: number, turnId: string, content: string): ConsoleFrame => ({
  event: 'userMessage',
  data: { sessionId: S, turnId, seq, content, hasImage: false },
});
const thinking = (seq: number, turnId: string): ConsoleFrame => ({
  event: 'thinking',
  data: { sessionId: S, turnId, seq },
});
const chunk = (seq: number, turnId: string, content: string): ConsoleFrame => ({
  event: 'chunk',
  data: { sessionId: S, turnId, seq, content },
});
const response = (seq: number, turnId: string, content: string): ConsoleFrame => ({
  event: 'response',
  data: { sessionId: S, turnId, seq, content, model: 'm' },
});
const toolCall = (seq: number, turnId: string, callId: string): ConsoleFrame => ({
  event: 'toolCall',
  data: { sessionId: S, turnId, seq, callId, toolName: 'echo', serverId: 'echo', args: { message: 'x' } },
});
const toolResult = (seq: number, turnId: string, callId: string): ConsoleFrame => ({
  event: 'toolResult',
  data: {
    sessionId: S,
    turnId,
    seq,
    callId,
    toolName: 'echo',
    serverId: 'echo',
    success: true,
    result: { content: [{ type: 'text', text: 'fixture echo: x' }] },
    durationMs: 3,
  },
});
const reset = (seq: number): ConsoleFrame => ({ event: 'conversationReset', data: { sessionId: S, seq } });
const compacted = (
  seq: number,
  extra: Partial<Extract<ConsoleFrame, { event: 'contextCompacted' }>['data']> = {},
): ConsoleFrame => ({
  event: 'contextCompacted',
  data: {
    sessionId: S,
    seq,
    method: 'summary',
    trigger: 'manual',
    upToSeq: seq - 1,
    summary: 'The user said hello.',
    tokensBefore: 1200,
    tokensAfter: 300,
    ...extra,
  },
});

/** What the transcript shows, one line per item. */
const shown = (state: ReturnType<typeof fold>, sessionId = S) =>
  sessionView(state, sessionId).items.map((i) => {
    switch (i.kind) {
      case 'user':
        return `user: ${i.content}`;
      case 'assistant':
        return `assistant${i.done ? '' : ' (streaming)'}: ${i.text}`;
      case 'tool':
        return `tool ${i.toolName}${i.approval ? ` approval:${i.approval.verdict?.decision ?? 'waiting'}` : ''}${i.outcome ? ` → ${i.outcome.success ? 'ok' : 'failed'}` : ''}`;
      case 'error':
        return `error: ${i.code} ${i.message}`;
      case 'reset':
        return 'reset';
      case 'compaction':
        return `compacted: ${i.method} ${i.trigger} ${i.tokensBefore}→${i.tokensAfter}${i.summary === undefined ? '' : ` "${i.summary}"`}`;
    }
  });

/** A whole turn as the service sends it live: user message, thinking, chunks, a tool call, the reply. */
const toolTurn = [
  user(1, 't1', 'Hello'),
  thinking(1, 't1'),
  chunk(1, 't1', 'Let me look.'),
  toolCall(3, 't1', 'c1'),
  toolResult(4, 't1', 'c1'),
  chunk(4, 't1', '\n\nFound it.'),
  response(5, 't1', 'Let me look.\n\nFound it.'),
];
/** The same turn replayed from the log: only its durable frames. */
const durable = (frames: ConsoleFrame[]) => frames.filter((f) => !['thinking', 'chunk'].includes(f.event));

describe('the console fold', () => {
  it('concatenates chunks into the streaming reply, which the response completes', () => {
    let state = foldAll(initialState, [user(1, 't1', 'Hi'), thinking(1, 't1')]);
    expect(shown(state)).toEqual(['user: Hi', 'assistant (streaming): ']);
    state = foldAll(state, [chunk(1, 't1', 'Hi'), chunk(1, 't1', ' there'), chunk(1, 't1', '!')]);
    expect(shown(state)).toEqual(['user: Hi', 'assistant (streaming): Hi there!']);
    state = fold(state, response(2, 't1', 'Hi there!'));
    expect(shown(state)).toEqual(['user: Hi', 'assistant: Hi there!']);
    expect(sessionView(state, S).lastSeq).toBe(2);
  });

  it('a turn resumed after a restart: stepRestarted replaces what streamed before with the reply so far', () => {
    let state = foldAll(initialState, [user(1, 't1', 'Hi'), thinking(1, 't1'), chunk(1, 't1', 'Hal')]);
    const restarted: ConsoleFrame = {
      event: 'stepRestarted',
      data: { sessionId: S, turnId: 't1', seq: 2, attempt: 1, content: '' },
    };
    state = foldAll(state, [restarted, chunk(2, 't1', 'Hello'), chunk(2, 't1', ' again')]);
    expect(shown(state)).toEqual(['user: Hi', 'assistant (streaming): Hello again']);
    state = fold(state, response(3, 't1', 'Hello again'));
    expect(shown(state)).toEqual(['user: Hi', 'assistant: Hello again']);
  });

  it('a page that subscribes mid-reply: replySoFar replaces what it streamed (missed chunks), the next chunks extend it', () => {
    let state = foldAll(initialState, [user(1, 't1', 'Hi'), thinking(1, 't1'), chunk(1, 't1', 'Hel')]);
    const soFar: ConsoleFrame = {
      event: 'replySoFar',
      data: { sessionId: S, turnId: 't1', seq: 1, content: 'Hello the' },
    };
    state = foldAll(state, [soFar, chunk(1, 't1', 're')]);
    expect(shown(state)).toEqual(['user: Hi', 'assistant (streaming): Hello there']);
    expect(sessionView(state, S).lastSeq).toBe(1);
    state = fold(state, response(2, 't1', 'Hello there'));
    expect(shown(state)).toEqual(['user: Hi', 'assistant: Hello there']);
  });

  it('shows a tool turn in seq order, live and replayed alike', () => {
    const live = foldAll(initialState, toolTurn);
    expect(shown(live)).toEqual(['user: Hello', 'tool echo → ok', 'assistant: Let me look.\n\nFound it.']);
    const replayed = foldAll(initialState, durable(toolTurn));
    expect(shown(replayed)).toEqual(shown(live));
    expect(sessionView(replayed, S).lastSeq).toBe(5);
  });

  it('replays after a reconnect with overlapping seqs: nothing twice, nothing cleared, the next turn continues', () => {
    // Seen before the connection dropped: the first turn, and the second one's user message.
    const before = foldAll(initialState, [
      ...toolTurn,
      user(6, 't2', 'And now?'),
      thinking(6, 't2'),
      chunk(6, 't2', 'Wor'),
    ]);
    const since = sessionView(before, S).lastSeq;
    expect(since).toBe(6);
    // The new connection gets a live frame of `default` before the replay, then the replay overlaps
    // what the page holds (a resume from an older seq, e.g. a second tab's state), then live frames.
    const replay = [
      response(7, 't2', 'World'),
      ...durable(toolTurn),
      user(6, 't2', 'And now?'),
      response(7, 't2', 'World'),
    ];
    const after = foldAll(before, [
      ...replay,
      user(8, 't3', 'Third'),
      thinking(8, 't3'),
      chunk(8, 't3', 'Yes'),
      response(9, 't3', 'Yes'),
    ]);
    expect(shown(after)).toEqual([
      'user: Hello',
      'tool echo → ok',
      'assistant: Let me look.\n\nFound it.',
      'user: And now?',
      'assistant: World',
      'user: Third',
      'assistant: Yes',
    ]);
    expect(sessionView(after, S).lastSeq).toBe(9);
  });

  it('returns the very same state for a durable frame already seen', () => {
    const state = foldAll(initialState, toolTurn);
    for (const frame of durable(toolTurn)) expect(fold(state, frame)).toBe(state);
  });

  it('puts frames of a replay that come after live ones in seq order', () => {
    const state = foldAll(initialState, [
      user(3, 't2', 'second'),
      user(1, 't1', 'first'),
      response(2, 't1', 'one'),
      response(4, 't2', 'two'),
    ]);
    expect(shown(state)).toEqual(['user: first', 'assistant: one', 'user: second', 'assistant: two']);
  });

  it('marks a reset and goes on after it; a replayed reset is not shown twice', () => {
    const frames = [
      user(1, 't1', 'Hi'),
      response(2, 't1', 'Hello'),
      reset(3),
      user(4, 't2', 'Again'),
      response(5, 't2', 'Sure'),
    ];
    const state = foldAll(initialState, frames);
    expect(shown(state)).toEqual(['user: Hi', 'assistant: Hello', 'reset', 'user: Again', 'assistant: Sure']);
    expect(shown(foldAll(state, frames))).toEqual(shown(state));
  });

  it('shows an approval waiting, then its verdict; the result follows', () => {
    const requested: ConsoleFrame = {
      event: 'toolApprovalRequested',
      data: {
        sessionId: S,
        turnId: 't1',
        seq: 3,
        callId: 'c1',
        toolName: 'echo',
        serverId: 'echo',
        args: {},
        expiresAt: '2026-01-01T00:00:00.000Z',
      },
    };
    const resolved: ConsoleFrame = {
      event: 'toolApprovalResolved',
      data: { sessionId: S, turnId: 't1', seq: 4, callId: 'c1', decision: 'approve', by: 'websocket' },
    };
    let state = foldAll(initialState, [user(1, 't1', 'Hi'), toolCall(2, 't1', 'c1'), requested]);
    expect(shown(state)).toEqual(['user: Hi', 'tool echo approval:waiting']);
    state = foldAll(state, [resolved, toolResult(5, 't1', 'c1'), requested, resolved]);
    expect(shown(state)).toEqual(['user: Hi', 'tool echo approval:approve → ok']);
  });

  it('names who approved when a signed-in caller did, else only what carried the answer, and a raise', () => {
    const resolved = (principal?: string): ConsoleFrame => ({
      event: 'toolApprovalResolved',
      data: {
        sessionId: S,
        turnId: 't1',
        seq: 3,
        callId: 'c1',
        decision: 'approve',
        by: 'websocket',
        ...(principal && { principal }),
      },
    });
    const verdictOf = (frame: ConsoleFrame) => {
      const item = sessionView(foldAll(initialState, [toolCall(2, 't1', 'c1'), frame]), S).items[0];
      return item?.kind === 'tool' ? item.approval?.verdict : undefined;
    };
    const signedIn = verdictOf(resolved('alice'));
    expect(signedIn).toEqual({ decision: 'approve', by: 'websocket', principal: 'alice' });
    expect(answeredBy(signedIn!)).toBe('by alice (websocket)');
    expect(answeredBy(verdictOf(resolved())!)).toBe('(websocket)');
    // A budget question approved with a raise keeps the new limit.
    const raised = resolved('ops');
    if (raised.event === 'toolApprovalResolved') raised.data.raiseTo = 0.05;
    expect(verdictOf(raised)).toEqual({ decision: 'approve', by: 'websocket', principal: 'ops', raiseTo: 0.05 });
  });

  it("keeps a turn error once, drops the turn's empty reply, and keeps each refused-frame error", () => {
    const failed: ConsoleFrame = {
      event: 'error',
      data: {
        sessionId: S,
        turnId: 't1',
        seq: 2,
        code: 'AGENT_ERROR',
        message: 'turn cancelled',
        details: { reason: 'cancelled' },
      },
    };
    const refused: ConsoleFrame = {
      event: 'error',
      data: { sessionId: S, code: 'RATE_LIMIT_EXCEEDED', message: 'slow down', details: {} },
    };
    const state = foldAll(initialState, [user(1, 't1', 'Hi'), thinking(1, 't1'), failed, failed, refused, refused]);
    expect(shown(state)).toEqual([
      'user: Hi',
      'error: AGENT_ERROR turn cancelled',
      'error: RATE_LIMIT_EXCEEDED slow down',
      'error: RATE_LIMIT_EXCEEDED slow down',
    ]);
    // Errors name no durable seq of their own for sure: resuming goes on from the last one known durable.
    expect(sessionView(state, S).lastSeq).toBe(1);
  });

  it('shows a compaction at its seq with its method, trigger, figures and summary; once, live and replayed alike', () => {
    const usage = { promptTokens: 900, completionTokens: 60, totalTokens: 960 };
    const frames = [...toolTurn, compacted(6, { usage }), user(7, 't2', 'Go on'), response(8, 't2', 'Going on')];
    const live = foldAll(initialState, frames);
    expect(shown(live)).toEqual([
      'user: Hello',
      'tool echo → ok',
      'assistant: Let me look.\n\nFound it.',
      'compacted: summary manual 1200→300 "The user said hello."',
      'user: Go on',
      'assistant: Going on',
    ]);
    expect(sessionView(live, S).items[3]).toEqual({
      kind: 'compaction',
      key: 'compaction:6',
      order: 6,
      method: 'summary',
      trigger: 'manual',
      upToSeq: 5,
      tokensBefore: 1200,
      tokensAfter: 300,
      summary: 'The user said hello.',
      usage,
    });
    expect(shown(foldAll(initialState, durable(frames)))).toEqual(shown(live));
    expect(fold(live, compacted(6, { usage }))).toBe(live); // replayed again: nothing twice
    expect(sessionView(live, S).lastSeq).toBe(8);
  });

  it('puts a compaction inside a turn between its user message and its reply; one without a summary has none', () => {
    const cleared: ConsoleFrame = {
      event: 'contextCompacted',
      data: {
        sessionId: S,
        seq: 2,
        turnId: 't1',
        method: 'clearToolResults',
        trigger: 'threshold',
        upToSeq: 0,
        tokensBefore: 5000,
        tokensAfter: 1800,
      },
    };
    const frames = [
      user(1, 't1', 'Big one'),
      thinking(1, 't1'),
      cleared,
      chunk(2, 't1', 'Done'),
      response(3, 't1', 'Done'),
    ];
    const live = foldAll(initialState, frames);
    expect(shown(live)).toEqual([
      'user: Big one',
      'compacted: clearToolResults threshold 5000→1800',
      'assistant: Done',
    ]);
    expect(shown(foldAll(initialState, durable(frames)))).toEqual(shown(live));
    // Overflow: the frame comes after the reply began streaming; the reply's next chunk moves it after.
    const overflow = compacted(2, { turnId: 't1', trigger: 'overflow' });
    const late = foldAll(initialState, [
      user(1, 't1', 'Big one'),
      thinking(1, 't1'),
      chunk(1, 't1', 'Do'),
      overflow,
      chunk(2, 't1', 'ne'),
      response(3, 't1', 'Done'),
    ]);
    expect(shown(late)).toEqual([
      'user: Big one',
      'compacted: summary overflow 1200→300 "The user said hello."',
      'assistant: Done',
    ]);
  });

  it("keeps each session's usage as last listed: a session listed without usage keeps its figures", () => {
    const u1 = { promptTokens: 100, completionTokens: 20, totalTokens: 120 };
    const u2 = { promptTokens: 250, completionTokens: 45, totalTokens: 295 };
    let state = fold(initialState, {
      event: 'sessionList',
      data: { sessions: [{ id: 'default', usage: u1 }, { id: 'other' }] },
    });
    expect(state.usage).toEqual({ default: u1 });
    expect(fold(state, { event: 'sessionList', data: { sessions: [{ id: 'default', usage: { ...u1 } }] } })).toBe(
      state,
    ); // unchanged: the very same state
    state = fold(state, { event: 'sessionList', data: { sessions: [{ id: 'default' }, { id: 'other', usage: u2 }] } }); // default left memory
    expect(state.usage).toEqual({ default: u1, other: u2 });
    expect(sessionView(state, 'default').items).toEqual([]);
  });

  it("forgets every session and its usage under another store (hello), so the new store's seq 1 shows after a restart", () => {
    const hello = (storeId: string): ConsoleFrame => ({ event: 'hello', data: { storeId } });
    const server = { id: 'echo', name: 'echo', status: 'connected' as const, type: 'stdio' as const };
    const usage = { promptTokens: 10, completionTokens: 2, totalTokens: 12 };
    const other: ConsoleFrame = {
      event: 'userMessage',
      data: { sessionId: 'other', turnId: 'o1', seq: 1, content: 'elsewhere', hasImage: false },
    };
    const listed: ConsoleFrame = { event: 'sessionList', data: { sessions: [{ id: S, usage }] } };
    // The first hello keeps what the page holds (a list loaded before it came).
    const first = fold(
      fold(fold(initialState, { event: 'serverList', data: { servers: [server] } }), listed),
      hello('store-a'),
    );
    expect(first.usage).toEqual({ [S]: usage });
    const before = foldAll(first, [...toolTurn, other]);
    expect(fold(before, hello('store-a'))).toBe(before); // a reconnect to the same store: nothing to forget
    // agentd restarted on a new memory store: its numbering starts again at 1.
    const restarted = [
      user(1, 'n1', 'After the restart'),
      thinking(1, 'n1'),
      chunk(1, 'n1', 'Fresh'),
      response(2, 'n1', 'Fresh'),
    ];
    expect(shown(foldAll(before, restarted))).not.toContain('user: After the restart'); // seq 1 taken for the old one's
    const forgotten = fold(before, hello('store-b'));
    expect(forgotten).toEqual({ storeId: 'store-b', sessions: {}, servers: { echo: server }, usage: {} });
    const after = foldAll(forgotten, restarted);
    expect(shown(after)).toEqual(['user: After the restart', 'assistant: Fresh']);
    expect(sessionView(after, S).lastSeq).toBe(2);
    expect(shown(after, 'other')).toEqual([]);
  });

  it('keeps sessions apart', () => {
    const other: ConsoleFrame = {
      event: 'userMessage',
      data: { sessionId: 'other', turnId: 'o1', seq: 1, content: 'elsewhere', hasImage: true },
    };
    const state = foldAll(initialState, [user(1, 't1', 'here'), other]);
    expect(shown(state)).toEqual(['user: here']);
    expect(shown(state, 'other')).toEqual(['user: elsewhere']);
  });

  it('keeps what a user message attached: the resources and the prompt it names', () => {
    const resources = [{ serverId: 'everything', uri: 'demo://resource/dynamic/text/1' }];
    const prompt = { serverId: 'everything', name: 'args-prompt' };
    const attached: ConsoleFrame = {
      event: 'userMessage',
      data: { sessionId: S, turnId: 't2', seq: 2, content: 'with more', hasImage: false, resources, prompt },
    };
    const [plain, rich] = sessionView(foldAll(initialState, [user(1, 't1', 'plain'), attached]), S).items;
    expect(plain).not.toHaveProperty('resources');
    expect(plain).not.toHaveProperty('prompt');
    expect(rich).toMatchObject({ kind: 'user', content: 'with more', resources, prompt });
  });

  it('tracks the tool servers from the REST list and their status frames', () => {
    const rec = (id: string, status: 'connected' | 'error' | 'disconnected') => ({
      id,
      name: id,
      status,
      type: 'stdio' as const,
    });
    let state = fold(initialState, {
      event: 'serverList',
      data: { servers: [rec('a', 'connected'), rec('b', 'connected')] },
    });
    state = foldAll(state, [
      { event: 'mcpServerStatus', data: rec('b', 'error') },
      { event: 'mcpServerStatus', data: rec('a', 'disconnected') },
      { event: 'mcpServerStatus', data: rec('c', 'connected') },
    ]);
    expect(Object.values(state.servers).map((s) => `${s.id}:${s.status}`)).toEqual(['b:error', 'c:connected']);
    expect(fold(state, { event: 'toolsChanged', data: { count: 3 } })).toBe(state);
  });

  it('handles every frame of the golden frame table', () => {
    const golden = JSON.parse(readFileSync(`${ROOT}test/golden/frames.json`, 'utf8')) as {
      frame: ConsoleFrame | null;
    }[];
    const frames = golden.flatMap((g) => (g.frame ? [g.frame] : []));
    expect(new Set(frames.map((f) => f.event))).toEqual(
      new Set([
        'userMessage',
        'reasoning',
        'toolCall',
        'toolResult',
        'response',
        'error',
        'conversationReset',
        'contextCompacted',
        'stepRestarted',
        'thinking',
        'chunk',
        'replySoFar',
        'hello',
      ]),
    );
    for (const frame of frames) expect(fold(initialState, frame), frame.event).not.toBe(initialState);
  });
});

describe("the pages' reconnect backoff", () => {
  it('doubles from the first delay up to the cap, each drawn from its upper half', () => {
    expect(backoffDelay(0, () => 0)).toBe(BACKOFF.first / 2);
    expect(backoffDelay(0, () => 1)).toBe(BACKOFF.first);
    expect(backoffDelay(3, () => 1)).toBe(BACKOFF.first * 8);
    expect(backoffDelay(50, () => 1)).toBe(BACKOFF.max);
    expect(backoffDelay(50, () => 0)).toBe(BACKOFF.max / 2);
  });
});
