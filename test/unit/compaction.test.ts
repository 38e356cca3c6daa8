/**
 * Compaction, given/when/then: the history fold of `contextCompacted` (summary, cleared tool
 * results, stale ones), its replay from `readFrom`, and the pure selection (where to cut, cheapest
 * first, a tool call and its result never split, keepTurns). Events are numbered 1, 2, 3, ... in
 * the order given (their seq).
 */
import { describe, expect, it } from 'vitest';
import {
  CLEARED_TOOL_RESULT,
  clearableChars,
  planCompaction,
  selectCut,
  summaryRequest,
  SUMMARY_HEADING,
} from '../../src/agent/compaction/compaction.ts';
import { foldSession } from '../../src/agent/session/state.ts';
import { createHistory, projectHistory } from '../../src/agent/session/history.ts';
import type { SessionEvent, SessionEventOf } from '../../src/conversation/session-events.ts';
import type { ChatMessage, ToolCallRequest } from '../../src/llm/types.ts';

const v = 4 as const;
const user = (content: string, turnId: string): SessionEvent => ({ v, type: 'userMessage', turnId, content });
const call = (id: string): ToolCallRequest => ({ id, name: 'fetch', arguments: `{"id":"${id}"}` });
const asked = (turnId: string, ...calls: ToolCallRequest[]): SessionEvent => ({
  v,
  type: 'assistantStep',
  turnId,
  text: '',
  toolCalls: calls,
  model: 'm',
});
const result = (callId: string, text: string, turnId: string): SessionEvent => ({
  v,
  type: 'toolResult',
  turnId,
  callId,
  toolName: 'fetch',
  serverId: 's',
  success: true,
  result: { text },
  text,
  durationMs: 1,
});
const replied = (text: string, turnId: string): SessionEvent => ({
  v,
  type: 'response',
  turnId,
  content: text,
  text,
  model: 'm',
});
const reset: SessionEvent = { v, type: 'reset' };
const zero = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
const summary = (upToSeq: number, text: string, readFrom = upToSeq + 1): SessionEventOf<'contextCompacted'> => ({
  v,
  type: 'contextCompacted',
  method: 'summary',
  trigger: 'manual',
  upToSeq,
  readFrom,
  summary: text,
  tokensBefore: 100,
  tokensAfter: 10,
  usageTotal: zero,
});
const cleared = (upToSeq: number, readFrom = 1): SessionEventOf<'contextCompacted'> => ({
  v,
  type: 'contextCompacted',
  method: 'clearToolResults',
  trigger: 'threshold',
  upToSeq,
  readFrom,
  tokensBefore: 100,
  tokensAfter: 50,
  usageTotal: zero,
});

const u = (content: string): ChatMessage => ({ role: 'user', content });
const a = (content: string, toolCalls?: ToolCallRequest[]): ChatMessage =>
  toolCalls ? { role: 'assistant', content, toolCalls } : { role: 'assistant', content };
const tool = (toolCallId: string, content: string): ChatMessage => ({ role: 'tool', toolCallId, content });
const sum = (text: string): ChatMessage => ({ role: 'system', content: SUMMARY_HEADING + text });

/** Three turns: seq 1-4 (t1: a tool round trip), 5-6 (t2), 7-8 (t3). */
const threeTurns: SessionEvent[] = [
  user('one', 't1'),
  asked('t1', call('c1')),
  result('c1', 'x'.repeat(400), 't1'),
  replied('r1', 't1'),
  user('two', 't2'),
  replied('r2', 't2'),
  user('three', 't3'),
  replied('r3', 't3'),
];

/** The history after `past`, both whole and incrementally, and as a reader from `readFrom` of the last compaction sees it. */
function given(...past: SessionEvent[]) {
  return {
    then(expected: ChatMessage[]) {
      expect(projectHistory(past)).toEqual(expected);
      const mark = past.findLast((e) => e.type === 'contextCompacted');
      if (mark?.type === 'contextCompacted') {
        const reread = past.map((event, i) => ({ seq: i + 1, event })).filter((s) => s.seq >= mark.readFrom);
        expect(projectHistory(reread), 'read back from readFrom').toEqual(expected);
      }
    },
  };
}

describe('the history fold of contextCompacted', () => {
  it('puts the summary in place of every message up to upToSeq, first, as a system message', () => {
    given(...threeTurns, summary(4, 'turn one fetched x')).then([
      sum('turn one fetched x'),
      u('two'),
      a('r2'),
      u('three'),
      a('r3'),
    ]);
  });

  it('goes on after the summary with the events that follow it', () => {
    given(...threeTurns, summary(6, 'S'), user('four', 't4'), replied('r4', 't4')).then([
      sum('S'),
      u('three'),
      a('r3'),
      u('four'),
      a('r4'),
    ]);
  });

  it('replaces an earlier summary with the next one', () => {
    given(...threeTurns, summary(4, 'first'), summary(6, 'second')).then([sum('second'), u('three'), a('r3')]);
  });

  it('clears the tool results up to upToSeq, keeping each call and its (cleared) result together', () => {
    given(...threeTurns, cleared(4)).then([
      u('one'),
      a('', [call('c1')]),
      tool('c1', CLEARED_TOOL_RESULT),
      a('r1'),
      u('two'),
      a('r2'),
      u('three'),
      a('r3'),
    ]);
  });

  it('leaves tool results after upToSeq as they were', () => {
    given(
      user('one', 't1'),
      asked('t1', call('c1')),
      result('c1', 'old', 't1'),
      replied('r1', 't1'),
      user('two', 't2'),
      asked('t2', call('c2')),
      result('c2', 'new', 't2'),
      cleared(4),
    ).then([
      u('one'),
      a('', [call('c1')]),
      tool('c1', CLEARED_TOOL_RESULT),
      a('r1'),
      u('two'),
      a('', [call('c2')]),
      tool('c2', 'new'),
    ]);
  });

  it('ignores a compaction planned before a reset that was stored first', () => {
    given(...threeTurns, reset, user('after', 't9'), summary(6, 'stale')).then([u('after')]);
  });

  it('answers a call left open before the cut with it: no orphaned tool message', () => {
    // t1 crashed with c1 open; t2's user message answers it (interrupted), then the summary drops both.
    const history = createHistory();
    for (const e of [
      user('one', 't1'),
      asked('t1', call('c1')),
      user('two', 't2'),
      replied('r2', 't2'),
      summary(2, 'S'),
    ])
      history.apply(e);
    expect(history.messages()).toEqual([sum('S'), u('two'), a('r2')]);
  });

  it('counts the characters of the projection it holds', () => {
    const history = createHistory();
    for (const e of threeTurns) history.apply(e);
    const before = history.chars;
    history.apply(summary(4, 'S'));
    expect(history.chars).toBeLessThan(before - 400);
    expect(history.base).toBe(4);
  });
});

describe('where a compaction cuts', () => {
  const history = createHistory();
  for (const e of threeTurns) history.apply(e);
  const messages = history.messages();
  const seqs = history.seqs();

  it('keeps the last keepTurns turns: the cut is at the start of a turn', () => {
    expect(selectCut(messages, seqs, 8, 2, 1)).toEqual({ index: 4, upToSeq: 4 });
    expect(messages[4]).toEqual(u('two'));
    expect(selectCut(messages, seqs, 8, 1, 1)).toEqual({ index: 6, upToSeq: 6 });
  });

  it('never splits a tool call from its result, whatever keepTurns', () => {
    for (let keep = 0; keep <= 4; keep++) {
      const cut = selectCut(messages, seqs, 8, keep, 0);
      if (!cut) continue;
      const kept = messages.slice(cut.index);
      const callsKept = new Set(
        kept.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : [])),
      );
      for (const m of kept) if (m.role === 'tool') expect(callsKept.has(m.toolCallId)).toBe(true);
      expect(kept[0]?.role ?? 'user').toBe('user');
    }
  });

  it('keeps fewer turns when keepTurns leaves nothing to compact, down to minKeep', () => {
    expect(selectCut(messages, seqs, 8, 3, 1)).toEqual({ index: 4, upToSeq: 4 }); // 3 turns: nothing before them, so 2 are kept
    expect(selectCut(messages.slice(0, 4), seqs.slice(0, 4), 4, 2, 1)).toBeUndefined(); // one turn, and it runs
    expect(selectCut(messages.slice(0, 4), seqs.slice(0, 4), 4, 2, 0)).toEqual({ index: 4, upToSeq: 4 }); // between turns: all of it
  });

  it('does not count an earlier summary as something to compact', () => {
    const h = createHistory();
    for (const e of [...threeTurns, summary(6, 'S')]) h.apply(e);
    expect(selectCut(h.messages(), h.seqs(), 9, 1, 1)).toBeUndefined();
  });
});

describe('cheapest first', () => {
  const history = createHistory();
  for (const e of threeTurns) history.apply(e);
  const base = {
    messages: history.messages(),
    seqs: history.seqs(),
    lastSeq: 8,
    keepTurns: 2,
    minKeep: 1,
    tokens: 300,
  };

  it('clears old tool results when that is enough', () => {
    expect(clearableChars(base.messages, 4)).toBe(400 - CLEARED_TOOL_RESULT.length);
    expect(planCompaction({ ...base, trigger: 'threshold', target: 250 })).toMatchObject({
      method: 'clearToolResults',
      cut: { upToSeq: 4 },
    });
  });

  it('asks for a summary when clearing is not enough, when no window is known, or when a person asked', () => {
    expect(planCompaction({ ...base, trigger: 'threshold', target: 100 })?.method).toBe('summary');
    expect(planCompaction({ ...base, trigger: 'overflow', target: undefined })?.method).toBe('summary');
    expect(planCompaction({ ...base, trigger: 'manual', target: 1000 })?.method).toBe('summary');
  });
});

describe('the summary request', () => {
  it('is the prompt, then the transcript inside <conversation>, tool results shortened', () => {
    const [system, transcript] = summaryRequest(
      'PROMPT',
      [u('hi'), a('', [call('c1')]), tool('c1', 'y'.repeat(5000)), a('done')],
      100_000,
    );
    expect(system).toEqual({ role: 'system', content: 'PROMPT' });
    expect(transcript?.content).toMatch(
      /^<conversation>\nUser: hi\nAssistant called tool fetch with \{"id":"c1"\}\nTool result: y{1000} … \[4000 more characters\]\nAssistant: done\n<\/conversation>/,
    );
  });

  it('keeps an earlier summary and leaves the oldest lines out past maxChars', () => {
    const [, transcript] = summaryRequest('P', [sum('before'), u('a'.repeat(50)), u('b'.repeat(50)), u('last')], 60);
    expect(transcript?.content).toContain('Earlier summary: before');
    expect(transcript?.content).toContain('[2 older messages left out]');
    expect(transcript?.content).toContain('User: last');
  });

  it('cuts a message too long for the request on its own to its share', () => {
    const [, transcript] = summaryRequest('P', [u('z'.repeat(10_000))], 1000);
    expect(transcript?.content.length).toBeLessThan(1100);
  });
});

describe('the usage totals fold', () => {
  const tokens = (n: number) => ({ promptTokens: n, completionTokens: n, totalTokens: 2 * n });
  const step = (turnId: string, usage: number, usageTotal?: number): SessionEvent => ({
    v,
    type: 'assistantStep',
    turnId,
    text: '',
    toolCalls: [call('c1')],
    model: 'm',
    usage: tokens(usage),
    ...(usageTotal !== undefined && { usageTotal: tokens(usageTotal) }),
  });
  const reply = (turnId: string, usage: number, usageTotal?: number): SessionEvent => ({
    v,
    type: 'response',
    turnId,
    content: 'ok',
    text: 'ok',
    model: 'm',
    usage: tokens(usage),
    ...(usageTotal !== undefined && { usageTotal: tokens(usageTotal) }),
  });
  const totalsOf = (...events: SessionEvent[]) => foldSession('s', events).usage;

  it('adds the usage of steps that carry no totals (logs older than usageTotal)', () => {
    expect(totalsOf(step('t1', 3), reply('t1', 4))).toEqual(tokens(7));
  });

  it('takes the totals of the latest event that carries them, then adds what follows', () => {
    expect(totalsOf(step('t1', 3), reply('t1', 4, 40))).toEqual(tokens(40));
    expect(totalsOf({ ...summary(2, 'S'), usageTotal: tokens(10) }, reply('t2', 1))).toEqual(tokens(11));
  });
});
