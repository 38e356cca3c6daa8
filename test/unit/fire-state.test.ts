/**
 * A fire's transitions (src/schedules/fire-state.ts `nextFire`), given a fire as recorded, when an outcome happens,
 * then the fire as recorded after it (undefined: unchanged); and the schedules' reaction (fire-ends.ts) on a fire's
 * turn end handed on twice (a crash between the fact and its checkpoint): one end recorded.
 */
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { fireEndsReaction } from '../../src/schedules/fire-ends.ts';
import { nextFire, type FireOutcome } from '../../src/schedules/fire-state.ts';
import { createRecordScheduleStore } from '../../src/schedules/record-schedule-store.ts';
import { fireTurnId, type FireRecord } from '../../src/schedules/store-types.ts';
import { createMemoryRecordStore } from '../../src/store/records/index.ts';
import { EVENT_VERSION, type SessionEvent } from '../../src/conversation/session-events.ts';
import { facts, stored } from '../support/facts.ts';

const plannedAt = '2026-11-29T09:00:00.000Z';
const at = '2026-11-29T09:00:05.000Z';
const turnId = fireTurnId('s1', Date.parse(plannedAt));
const fire = (status: FireRecord['status'], over: Partial<FireRecord> = {}): FireRecord => ({
  scheduleId: 's1',
  status,
  plannedAt,
  ...over,
});
const usage = { promptTokens: 5, completionTokens: 2, totalTokens: 7 };
const sent: FireOutcome = { type: 'sent', session: 'runs', turnId, firedAt: '2026-11-29T09:00:01.000Z' };
const sentFields = { session: 'runs', turnId, firedAt: '2026-11-29T09:00:01.000Z' };
const finished: FireOutcome = { type: 'ended', end: { failed: false, usage }, at };
const failed: FireOutcome = { type: 'ended', end: { failed: true, code: 'AGENT_ERROR' }, at };
const sendFailed: FireOutcome = { type: 'sendFailed', session: 'runs', reason: 'RATE_LIMIT_EXCEEDED: quota' };
const ended = fire('finished', { finishedAt: at, usage });

describe('nextFire', () => {
  const rows: [given: FireRecord, when: FireOutcome, then: FireRecord | undefined][] = [
    [fire('claimed'), sent, fire('sent', sentFields)],
    [fire('queued'), sent, fire('sent', sentFields)],
    [fire('sent', sentFields), sent, undefined],
    // Its turn ended before the send was recorded: the end stays, the send's fields join it.
    [ended, sent, { ...ended, ...sentFields }],
    [fire('claimed'), sendFailed, fire('failed', { session: 'runs', reason: 'RATE_LIMIT_EXCEEDED: quota' })],
    [fire('sent', sentFields), sendFailed, undefined],
    [ended, sendFailed, undefined],
    [fire('sent', sentFields), finished, fire('finished', { ...sentFields, finishedAt: at, usage })],
    [fire('sent', sentFields), failed, fire('failed', { ...sentFields, finishedAt: at, reason: 'AGENT_ERROR' })],
    [fire('claimed'), finished, fire('finished', { finishedAt: at, usage })],
    // An end told again, or after the fire failed to send or was skipped, changes nothing.
    [ended, finished, undefined],
    [ended, failed, undefined],
    [fire('failed', { reason: 'quota' }), finished, undefined],
    [fire('skipped', { reason: 'overlap' }), finished, undefined],
  ];
  it.each(rows)('given %o, when %o, then %o', (given, when, then) => {
    expect(nextFire(given, when)).toEqual(then);
  });
});

describe("the schedules' reaction", () => {
  it("records a fire's end once when its turn's end is handed on twice (a crash before its checkpoint)", async () => {
    const store = createRecordScheduleStore({ records: createMemoryRecordStore(), log: pino({ level: 'silent' }) });
    await store.claim('s1', Date.parse(plannedAt));
    await store.change(fire('claimed'), (f) => nextFire(f, sent));
    const ends: FireRecord[] = [];
    const reaction = fireEndsReaction({ store, metrics: undefined, ended: (f) => ends.push(f) });
    const event: SessionEvent = {
      v: EVENT_VERSION,
      type: 'response',
      turnId,
      content: 'done',
      text: 'done',
      model: 'm',
      usage,
    };
    const response = stored(event, 3, at, 'runs');
    expect(await reaction.handle(response)).toBe(true);
    expect(await reaction.handle(response)).toBe(false);
    expect(ends).toHaveLength(1);
    expect((await store.runs('s1', 10)).map((r) => [r.status, r.finishedAt, r.usage])).toEqual([
      ['finished', at, usage],
    ]);
    // A turn that is no fire's is not looked up.
    expect(await reaction.handle(stored(facts.response('t-other', 'x'), 4, at, 'runs'))).toBe(false);
  });
});
