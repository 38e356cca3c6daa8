/**
 * The upcaster of questions (src/conversation/session-events-v3.ts): a version 3 log's six question types — a
 * sampling request stored as a disguised tool approval included — read as the one pair, and `toFrame` gives the
 * frames version 3 gave (test/fixtures/v3-log: the log a JSONL store wrote, and the frames its history listed).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toFrame } from '../../src/agent/frames.ts';
import { checkSessionEvent, type SessionEvent } from '../../src/conversation/session-events.ts';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'v3-log');
const lines = readFileSync(join(FIXTURE, 'legacy.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l !== '')
  .map((l) => JSON.parse(l) as { seq: number; ts: string; sessionId: string; event: Record<string, unknown> });
const read = lines.map((l) => {
  const checked = checkSessionEvent(l.event);
  if (!checked.ok) throw new Error(`line ${l.seq}: ${checked.issue}`);
  return { ...l, event: checked.event };
});
const at = (seq: number): SessionEvent => read.find((l) => l.seq === seq)!.event;

describe('questions of a version 3 log', () => {
  it('read as the pair: an approval, its denial with a reason, an elicitation, a sampling request, a client tool call', () => {
    const types = read.map((l) => l.event.type);
    expect(types.filter((t) => t === 'questionAsked')).toHaveLength(5);
    expect(types.filter((t) => t === 'questionClosed')).toHaveLength(4);
    expect(at(4)).toEqual({
      v: 4,
      type: 'questionAsked',
      turnId: 'tr2knr-6',
      question: {
        id: 'call_0_0',
        kind: 'approval',
        callId: 'call_0_0',
        serverId: 'everything',
        toolName: 'echo',
        args: { message: 'asked' },
        expiresAt: '2026-11-27T08:06:59.409Z',
      },
    });
    expect(at(5)).toEqual({
      v: 4,
      type: 'questionClosed',
      turnId: 'tr2knr-6',
      id: 'call_0_0',
      answer: { decision: 'deny', reason: 'not now' },
      by: 'rest',
    });
    expect(at(11)).toMatchObject({
      question: {
        id: 'el_595e9272-94ef-4321-ad14-f0990defce25',
        kind: 'elicitation',
        callId: 'call_2_0',
        mode: 'form',
      },
    });
    expect(at(12)).toMatchObject({ id: 'el_595e9272-94ef-4321-ad14-f0990defce25', answer: { action: 'decline' } });
    // The disguise is gone: a sampling question of its call, under its old id, with no tool name.
    const sampling = at(18);
    expect(sampling).toMatchObject({
      type: 'questionAsked',
      question: { id: 'call_4_0~sampling-cff74084', kind: 'sampling', callId: 'call_4_0', serverId: 'everything' },
    });
    expect(sampling.type === 'questionAsked' && sampling.question).not.toHaveProperty('toolName');
    expect(at(19)).toMatchObject({ id: 'call_4_0~sampling-cff74084', answer: { decision: 'approve' } });
    expect(at(26)).toMatchObject({ question: { id: 'call_6_0', kind: 'clientTool', toolName: 'locate' } });
    expect(at(27)).toMatchObject({ type: 'questionClosed', id: 'call_6_0', answer: { content: '' }, by: 'rest' });
  });

  it('replay the frames version 3 gave', () => {
    const frames = read.map((l) => toFrame(l)).filter((f) => f !== undefined);
    expect(frames).toEqual(JSON.parse(readFileSync(join(FIXTURE, 'history.json'), 'utf8')));
  });

  it('refuses an old type at the current version and a pair type at an old one', () => {
    expect(checkSessionEvent({ ...lines[3]!.event, v: 4 })).toMatchObject({ ok: false });
    expect(checkSessionEvent({ ...(at(4) as object), v: 3 })).toEqual({
      ok: false,
      issue: 'event.type: questionAsked is not a version 3 event',
    });
  });
});
