/**
 * The session transfer format (NDJSON codec, line-by-line validation) and the export/import/fork
 * logic over a real in-memory store: copies keep seq, ts and payloads; what a copy leaves open is
 * closed so nothing of it runs when the new session opens.
 */
import { describe, expect, it } from 'vitest';
import { openTurnOf, queuedOf, resumeOf } from '../../src/agent/session/state.ts';
import { closingEvents, createSessionTransfer } from '../../src/agent/session/transfer.ts';
import type { SessionEvent } from '../../src/conversation/session-events.ts';
import {
  MAX_LINE_DEPTH,
  parseTransfer,
  transferLine,
  transferPieces,
  type TransferEntry,
} from '../../src/conversation/session-transfer.ts';
import { createMemoryStore } from '../../src/store/memory-store.ts';
import { manualClock, sampleEvents, user } from './store-contract.ts';

const ts = '2025-01-02T03:04:05.678Z';
const entries: TransferEntry[] = sampleEvents.map((event, i) => ({ seq: i + 1, ts, event }));
const text = (lines: string[]) => Buffer.from(lines.join('\n') + '\n');
const lineOf = (value: unknown) => JSON.stringify(value);

/** The error parseTransfer throws for `body`. */
function refusal(body: string | Buffer): unknown {
  try {
    parseTransfer(typeof body === 'string' ? Buffer.from(body) : body);
  } catch (e) {
    return e;
  }
  throw new Error('accepted');
}

describe('transfer format', () => {
  it('writes {seq, ts, event} per line, without the session, and reads it back', () => {
    const stored = entries.map((e) => ({ ...e, sessionId: 'old-id' }));
    const body = [...transferPieces(stored, 100)].join('');
    expect(body).toBe(stored.map(transferLine).join(''));
    expect(body).not.toContain('old-id');
    expect(body.split('\n').at(0)).toBe(`{"seq":1,"ts":"${ts}","event":${JSON.stringify(sampleEvents[0])}}`);
    expect(parseTransfer(Buffer.from(body))).toEqual(entries);
  });

  it('joins lines into pieces of about the size asked for, and gives none for no event', () => {
    const pieces = [...transferPieces(entries, 1)];
    expect(pieces).toHaveLength(entries.length);
    expect([...transferPieces(entries)]).toHaveLength(1);
    expect([...transferPieces([])]).toEqual([]);
  });

  it('allows blank lines, CRLF, a byte order mark, no final newline, and a store line with its sessionId (ignored)', () => {
    const body = `\uFEFF${lineOf({ seq: 1, ts, sessionId: 'x', event: user('a') })}\r\n\r\n${lineOf({ seq: 2, ts, event: user('b') })}`;
    expect(parseTransfer(Buffer.from(body))).toEqual([
      { seq: 1, ts, event: user('a') },
      { seq: 2, ts, event: user('b') },
    ]);
  });

  it('upcasts events of older versions and keeps seqs with a gap', () => {
    const v1 = { type: 'assistantMessage', turnId: 't1', content: 'hi', final: true, model: 'm' };
    expect(parseTransfer(text([lineOf({ seq: 1, ts, event: user('a') }), lineOf({ seq: 4, ts, event: v1 })]))).toEqual([
      { seq: 1, ts, event: user('a') },
      { seq: 4, ts, event: { v: 4, type: 'response', turnId: 't1', content: 'hi', text: 'hi', model: 'm' } },
    ]);
  });

  it.each([
    ['not JSON', '{"seq":2,', /^not JSON/],
    ['not an object', '[1,2]', /must be a JSON object/],
    ['an unknown field', lineOf({ seq: 2, ts, event: user('b'), extra: 1 }), /unknown field "extra"/],
    ['no seq', lineOf({ ts, event: user('b') }), /seq is missing/],
    [
      'a seq that is not a positive integer',
      lineOf({ seq: 1.5, ts, event: user('b') }),
      /seq must be a positive integer/,
    ],
    [
      'a seq not above the previous',
      lineOf({ seq: 1, ts, event: user('b') }),
      /seq 1 must be greater than the previous line's \(1\)/,
    ],
    ['a bad time', lineOf({ seq: 2, ts: 'yesterday', event: user('b') }), /ts must be an ISO 8601 UTC time/],
    ['no event', lineOf({ seq: 2, ts }), /event is missing/],
    ['an unknown event type', lineOf({ seq: 2, ts, event: { v: 2, type: 'teleport' } }), /^event\.type: /],
    [
      'an event missing a field',
      lineOf({ seq: 2, ts, event: { v: 2, type: 'userMessage', turnId: 't' } }),
      /^event\.content: /,
    ],
    [
      'an event of a later version',
      lineOf({ seq: 2, ts, event: { v: 5, type: 'reset' } }),
      /event\.v: version 5 is not one this agentd reads/,
    ],
    [
      'JSON nested too deep',
      `{"seq":2,"ts":"${ts}","event":${'['.repeat(MAX_LINE_DEPTH + 1)}${']'.repeat(MAX_LINE_DEPTH + 1)}}`,
      /deeper than/,
    ],
  ])('refuses %s with 400 INVALID_REQUEST naming the line', (_name, bad, issue) => {
    const error = refusal(
      text([lineOf({ seq: 1, ts, event: user('a') }), '', bad, lineOf({ seq: 9, ts, event: user('z') })]),
    );
    expect(error).toMatchObject({ code: 'INVALID_REQUEST', details: { line: 3, issue: expect.stringMatching(issue) } });
    expect((error as Error).message).toMatch(/^Import line 3: /);
  });

  it('refuses a body that is not UTF-8, or holds no event', () => {
    expect(refusal(Buffer.from([0x7b, 0xff, 0x7d, 0x0a]))).toMatchObject({
      code: 'INVALID_REQUEST',
      details: { issue: 'not UTF-8' },
    });
    expect(refusal('')).toMatchObject({ code: 'INVALID_REQUEST', details: { issue: 'empty' } });
    expect(refusal('\n \n')).toMatchObject({ code: 'INVALID_REQUEST', details: { issue: 'empty' } });
  });
});

const ev = {
  user: (turnId: string): SessionEvent => ({ v: 4, type: 'userMessage', turnId, content: turnId }),
  step: (turnId: string, callId: string): SessionEvent => ({
    v: 4,
    type: 'assistantStep',
    turnId,
    text: '',
    toolCalls: [{ id: callId, name: 'echo', arguments: '{}' }],
    model: 'm',
  }),
  call: (turnId: string, callId: string): SessionEvent => ({
    v: 4,
    type: 'toolCall',
    turnId,
    callId,
    toolName: 'echo',
    serverId: 's',
    args: {},
  }),
  ask: (turnId: string, callId: string): SessionEvent => ({
    v: 4,
    type: 'questionAsked',
    turnId,
    question: {
      id: callId,
      kind: 'approval',
      callId,
      serverId: 's',
      toolName: 'echo',
      args: {},
      expiresAt: '2099-01-01T00:00:00.000Z',
    },
  }),
  queued: (turnId: string): SessionEvent => ({
    v: 4,
    type: 'messageQueued',
    turnId,
    correlationId: `c-${turnId}`,
    content: turnId,
  }),
  response: (turnId: string): SessionEvent => ({
    v: 4,
    type: 'response',
    turnId,
    content: 'ok',
    text: 'ok',
    model: 'm',
  }),
};

describe('closing what a copied log leaves open', () => {
  it('a log at rest needs nothing', () => {
    expect(closingEvents([ev.user('t1'), ev.response('t1')], 'imported')).toEqual([]);
  });

  it('ends a running turn and discards the messages queued behind it, so nothing resumes at open', () => {
    const log = [
      ev.user('t1'),
      ev.response('t1'),
      ev.user('t2'),
      ev.step('t2', 'c1'),
      ev.call('t2', 'c1'),
      ev.queued('t3'),
      ev.queued('t4'),
    ];
    const closing = closingEvents(log, 'forked');
    expect(closing).toEqual([
      {
        v: 4,
        type: 'turnFailed',
        turnId: 't2',
        code: 'AGENT_ERROR',
        message: 'The turn was stopped: the session was forked before it ended',
        details: { reason: 'forked' },
      },
      {
        v: 4,
        type: 'turnFailed',
        turnId: 't3',
        code: 'AGENT_ERROR',
        message: 'message discarded before its turn started (forked)',
        details: { reason: 'forked' },
        cancelled: true,
      },
      {
        v: 4,
        type: 'turnFailed',
        turnId: 't4',
        code: 'AGENT_ERROR',
        message: 'message discarded before its turn started (forked)',
        details: { reason: 'forked' },
        cancelled: true,
      },
    ]);
    const closed = [...log, ...closing];
    expect(openTurnOf(closed)).toBeUndefined();
    expect(queuedOf(closed)).toEqual([]);
  });

  it('ends a turn waiting for approval, which a session would otherwise resume', () => {
    const log = [ev.user('t1'), ev.step('t1', 'c1'), ev.call('t1', 'c1'), ev.ask('t1', 'c1')];
    expect(resumeOf(log, 0)).toBeDefined();
    const closed = [...log, ...closingEvents(log, 'imported')];
    expect(resumeOf(closed, 0)).toBeUndefined();
    expect(openTurnOf(closed)).toBeUndefined();
  });
});

describe('export, import, fork over a store', () => {
  const setup = async () => {
    const clock = manualClock(Date.parse('2026-03-04T05:06:07.890Z'));
    const store = createMemoryStore<SessionEvent>({ clock });
    const held = new Set<string>();
    const transfer = createSessionTransfer({ store, clock, inUse: (id) => held.has(id) });
    await store.append('src', [
      ev.user('t1'),
      ev.response('t1'),
      ev.user('t2'),
      ev.step('t2', 'c1'),
      ev.call('t2', 'c1'),
    ]);
    return { store, transfer, held };
  };

  it('an import keeps seqs, times and events, then closes the open turn with the next seq at the current time', async () => {
    const { store, transfer } = await setup();
    const { events } = await transfer.exportLog('src');
    expect(await transfer.importLog('copy', events)).toEqual({ sessionId: 'copy', lastSeq: 6 });
    const copied = await store.read('copy');
    expect(copied.slice(0, 5)).toEqual(events.map((e) => ({ ...e, sessionId: 'copy' })));
    expect(copied[5]).toMatchObject({
      seq: 6,
      ts: '2026-03-04T05:06:07.890Z',
      event: { type: 'turnFailed', turnId: 't2', details: { reason: 'imported' } },
    });
    expect(await transfer.exportLog('nobody')).toEqual({ events: [] });
  });

  it('a fork copies the prefix up to seq exactly; a fork at rest adds nothing', async () => {
    const { store, transfer } = await setup();
    expect(await transfer.fork('src', 2, 'f2')).toEqual({ sessionId: 'f2', lastSeq: 2 });
    const source = await store.read('src');
    expect(await store.read('f2')).toEqual(source.slice(0, 2).map((e) => ({ ...e, sessionId: 'f2' })));
    expect(await transfer.fork('src', 4, 'f4')).toEqual({ sessionId: 'f4', lastSeq: 5 });
    expect((await store.read('f4')).map((e) => e.event.type)).toEqual([
      'userMessage',
      'response',
      'userMessage',
      'assistantStep',
      'turnFailed',
    ]);
  });

  it('refuses a seq outside 1..lastSeq naming seq, and a new id that exists (stored or held)', async () => {
    const { transfer, held } = await setup();
    for (const seq of [0, 6, 1.5]) {
      await expect(transfer.fork('src', seq, 'x')).rejects.toMatchObject({
        code: 'INVALID_REQUEST',
        details: { field: 'seq', lastSeq: 5 },
      });
    }
    await expect(transfer.fork('nobody', 1, 'x')).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      details: { field: 'seq', lastSeq: 0 },
    });
    await expect(transfer.fork('src', 1, 'src')).rejects.toMatchObject({ details: { reason: 'exists' } });
    held.add('open');
    await expect(transfer.importLog('open', entries)).rejects.toMatchObject({ details: { reason: 'exists' } });
  });
});
