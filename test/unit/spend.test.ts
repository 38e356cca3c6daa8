/**
 * Spend in money (src/spend): the periods of a time zone (a day of 23 or 25 hours at daylight-saving changes), the
 * ledger on the record store (a fact recorded twice counts once; concurrent writers all count; totals by day and
 * month; raises never lower a limit) and the budget gate (limits by principal, the worst case, a new day's count).
 */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/index.ts';
import { records } from '../../src/store/index.ts';
import { createBudgetGate, createLedger, entryOf, periodsOf, type SpendEntry } from '../../src/spend/index.ts';
import { budgetsSchema } from '../../src/config/budgets-schema.ts';
import { parseConfig } from '../../src/config/index.ts';
import type { SessionStoredEvent } from '../../src/agent/frames.ts';
import { sessionKey } from '../../src/session-id.ts';
import { budgetQuestion, budgetRefusal } from '../../src/conversation/budget-question.ts';
import { askedEvent } from '../../src/conversation/questions.ts';
import type { SessionEventOf } from '../../src/conversation/session-events.ts';
import { askedFrame } from '../../src/agent/question-frames.ts';
import { interruptOf } from '../../src/ag-ui-face/interrupts.ts';
import { formOf } from '../../src/mcp-face/questions.ts';

const log = createLogger('silent');
const at = (iso: string) => Date.parse(iso);

describe('periods', () => {
  it('names the wall date of the zone and ends a day at its next midnight, 23 hours on a spring-forward day', () => {
    const berlin = periodsOf(at('2026-03-28T23:30:00Z'), 'Europe/Berlin'); // 00:30 on the 29th, in Berlin
    expect(berlin.day.key).toBe('d:2026-03-29');
    expect(berlin.month.key).toBe('m:2026-03');
    expect(new Date(berlin.day.endsAt).toISOString()).toBe('2026-03-29T22:00:00.000Z'); // CEST from 02:00
    expect(new Date(berlin.month.endsAt).toISOString()).toBe('2026-03-31T22:00:00.000Z');
    const autumn = periodsOf(at('2026-10-25T01:00:00Z'), 'Europe/Berlin');
    expect(autumn.day.endsAt - at('2026-10-24T22:00:00Z')).toBe(25 * 3_600_000);
    expect(periodsOf(at('2026-12-31T23:59:59Z'), 'UTC').month.endsAt).toBe(at('2027-01-01T00:00:00Z'));
  });
});

const entry = (amount: number, when: string, principal = 'alice'): SpendEntry => ({
  ...{ principal, sessionId: 's1', kind: 'step', model: 'm', at: at(when), amount, currency: 'USD' },
  ...{ source: 'provider', promptTokens: 10, completionTokens: 5 },
});

describe('the ledger', () => {
  const ledgerOn = () => {
    const store = records.createMemoryRecordStore({ log });
    return createLedger(store, { timeZone: 'UTC', log });
  };

  it('counts a fact once however often it is recorded, and sums by day and month', async () => {
    const ledger = ledgerOn();
    expect(await ledger.record('s1#1', entry(0.25, '2026-11-28T10:00:00Z'))).toBe(true);
    expect(await ledger.record('s1#1', entry(0.25, '2026-11-28T10:00:00Z'))).toBe(false);
    await ledger.record('s1#2', entry(0.5, '2026-11-29T10:00:00Z'));
    const totals = await ledger.totals('alice', at('2026-11-29T12:00:00Z'), 's1');
    expect(totals.day.amounts).toEqual({ USD: 0.5 });
    expect(totals.month.amounts).toEqual({ USD: 0.75 });
    const scanned = async (principal: string | undefined, from: number) => {
      const amounts: number[] = [];
      for await (const e of ledger.scan(principal, from, Infinity, 1)) amounts.push(e.amount!);
      return amounts;
    };
    expect(await scanned('alice', 0)).toEqual([0.25, 0.5]);
    expect(await scanned(undefined, at('2026-11-29T00:00:00Z'))).toEqual([0.5]);
  });

  it('keeps an entry without a price (tokens only) out of the totals a budget reads', async () => {
    const ledger = ledgerOn();
    const { amount: _a, currency: _c, source: _s, ...unpriced } = entry(0, '2026-11-29T10:00:00Z');
    expect(await ledger.record('s1#1', unpriced)).toBe(true);
    expect(await ledger.record('s1#1', unpriced)).toBe(false);
    expect((await ledger.totals('alice', at('2026-11-29T10:00:00Z'), 's1')).day.amounts).toEqual({});
  });

  it('counts every one of concurrent writers', async () => {
    const ledger = ledgerOn();
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => ledger.record(`s1#${i + 1}`, entry(0.5, '2026-11-29T10:00:00Z'))),
    );
    expect((await ledger.totals('alice', at('2026-11-29T10:00:00Z'), 's1')).day.amounts).toEqual({ USD: 10 });
  });

  it('takes every usage from the stored facts: its cost when priced, its tokens alone when not', () => {
    const stored = (event: unknown): SessionStoredEvent =>
      ({ seq: 3, ts: '2026-11-29T10:00:00.000Z', sessionId: 's1', event }) as SessionStoredEvent;
    const usage = { promptTokens: 10, completionTokens: 5, totalTokens: 15 };
    const priced = { ...usage, cost: { amount: 0.1, currency: 'EUR', source: 'config' } };
    const unpriced = entryOf(stored({ v: 1, type: 'response', turnId: 't', content: '', model: 'm', usage }));
    expect(unpriced).toMatchObject({ kind: 'step', model: 'm', promptTokens: 10, completionTokens: 5 });
    expect(unpriced).not.toHaveProperty('amount');
    expect(entryOf(stored({ v: 1, type: 'userMessage', content: 'hi' }))).toBeUndefined();
    expect(
      entryOf(stored({ v: 1, type: 'response', turnId: 't', content: '', model: 'm', usage: priced })),
    ).toMatchObject({ principal: '@unnamed', kind: 'step', amount: 0.1, currency: 'EUR', turnId: 't' });
    expect(entryOf(stored({ v: 1, type: 'serverSampled', turnId: 't', model: 'm', usage: priced }))?.kind).toBe(
      'sampling',
    );
  });
});

describe('the budget gate', () => {
  const config = budgetsSchema.parse({
    default: { day: 1 },
    principals: { bob: { month: 2, session: 0.5, hard: true } },
  })!;

  it('answers the first budget a step would pass, with its worst case, and starts each day from nothing', async () => {
    const store = records.createMemoryRecordStore({ log });
    const ledger = createLedger(store, { timeZone: 'UTC', log });
    let now = at('2026-11-29T10:00:00Z');
    const gate = createBudgetGate(config, ledger, () => now);
    await ledger.record('s1#1', entry(0.9, '2026-11-29T09:00:00Z'));
    expect(await gate.reserve({ sessionKey: 's1', sessionSpent: 0, estimate: 0.05 })).toBeUndefined();
    const over = await gate.reserve({ sessionKey: 's1', sessionSpent: 0, estimate: 1.2 });
    expect(over).toMatchObject({ principal: '@unnamed', budget: 'day', limit: 1, used: 0, estimate: 1.2, hard: false });
    // alice, not @unnamed: the entry above was alice's.
    const alice = sessionKey('alice', 's1');
    expect(await gate.reserve({ sessionKey: alice, sessionSpent: 0, estimate: 0.2 })).toMatchObject({
      principal: 'alice',
      used: 0.9,
      resetTime: '2026-11-30T00:00:00.000Z',
    });
    now = at('2026-11-30T00:00:01Z');
    expect(await gate.reserve({ sessionKey: alice, sessionSpent: 0, estimate: 0.2 })).toBeUndefined();
    // A raise holds for its period only.
    await gate.raise(
      { ...over!, principal: 'alice', period: 'd:2026-11-30', resetTime: '2026-12-01T00:00:00.000Z' },
      5,
    );
    expect(await gate.reserve({ sessionKey: alice, sessionSpent: 0, estimate: 4 })).toBeUndefined();
  });

  it("holds bob to his own limits: the session's spend, then the month", async () => {
    const ledger = createLedger(records.createMemoryRecordStore({ log }), { timeZone: 'UTC', log });
    const gate = createBudgetGate(config, ledger, () => at('2026-11-29T10:00:00Z'));
    const bob = sessionKey('bob', 's9');
    expect(await gate.reserve({ sessionKey: bob, sessionSpent: 0.45, estimate: 0.1 })).toMatchObject({
      budget: 'session',
      limit: 0.5,
      hard: true,
    });
    expect(await gate.reserve({ sessionKey: bob, sessionSpent: 0, estimate: 0.1 })).toBeUndefined();
    await ledger.record('s9#1', entry(1.9, '2026-11-02T10:00:00Z', 'bob'));
    expect(await gate.reserve({ sessionKey: bob, sessionSpent: 0, estimate: 0.2 })).toMatchObject({
      used: 1.9,
      budget: 'month',
      resetTime: '2026-12-01T00:00:00.000Z',
    });
    expect(gate.applies(bob)).toBe(true);
  });
});

describe('budgets config', () => {
  it('refuses bad budgets naming the key', () => {
    const llm = { provider: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1', model: 'm', apiKey: 'k' };
    const bad = (budgets: unknown) => () => parseConfig({ llm, budgets });
    expect(bad({ timeZone: 'Mars/Olympus' })).toThrow(/budgets\.timeZone/);
    expect(bad({ default: { day: -1 } })).toThrow(/budgets\.default\.day/);
    expect(bad({ principals: { alice: { weekly: 1 } } })).toThrow(/budgets\.principals\.alice/);
    expect(bad({ currency: 'dollars' })).toThrow(/budgets\.currency/);
    expect(parseConfig({ llm, budgets: { default: { day: 1 } } }).budgets).toMatchObject({
      currency: 'USD',
      timeZone: 'UTC',
      answeredBy: 'admin',
      default: { day: 1 },
    });
  });
});

describe('a budget question on every face', () => {
  const over = {
    ...{ principal: 'alice', budget: 'day' as const, limit: 1, used: 0.99, estimate: 0.02, currency: 'USD' },
    ...{ resetTime: '2026-11-30T00:00:00.000Z', period: 'd:2026-11-29', hard: false },
  };
  const q = budgetQuestion({ sessionId: 's1', turnId: 't1' }, over, '2026-11-29T12:00:00.000Z');

  it('is an approval of agentd/budget on the wire', () => {
    const frame = askedFrame('s1', 7, askedEvent(q) as SessionEventOf<'questionAsked'>);
    expect(frame).toMatchObject({
      event: 'toolApprovalRequested',
      data: { callId: q.id, toolName: 'agentd/budget', serverId: 'agentd', args: { limit: 1, used: 0.99 } },
    });
  });

  it('is an AG-UI interrupt of reason budget and an MCP approve/deny form', () => {
    expect(interruptOf(q)).toMatchObject({ reason: 'budget', metadata: { budget: { principal: 'alice' } } });
    // One sentence on every face: the interrupt's, the form's and the frame's.
    const sentence = "alice's daily budget is $1.00: $0.99 spent so far, and the next model step may cost up to";
    expect(interruptOf(q).message).toContain(sentence);
    expect(formOf(q)?.message).toBe(interruptOf(q).message);
    expect(askedFrame('s1', 7, askedEvent(q) as SessionEventOf<'questionAsked'>).data).toMatchObject({
      message: interruptOf(q).message,
    });
    expect(formOf(q)?.requestedSchema.properties).toHaveProperty('decision');
  });

  it('fails the turn with RATE_LIMIT_EXCEEDED and the details a client needs', () => {
    const err = budgetRefusal(over);
    expect(err.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(err.details).toMatchObject({ reason: 'budget', limit: 1, used: 0.99, remaining: 0, resetTime: 1795996800 });
  });
});
