/** What a webhook announces (src/webhooks/events.ts) and how a delivery moves after an attempt (dispatcher.ts). */
import { describe, expect, it } from 'vitest';
import { nextState } from '../../src/webhooks/dispatcher.ts';
import { deletedEvent, webhookEventOf } from '../../src/webhooks/events.ts';
import type { Delivery } from '../../src/webhooks/outbox-store.ts';
import { sessionKey } from '../../src/session-id.ts';
import { parseConfig } from '../../src/config/index.ts';
import { EVENT_VERSION, type SessionEvent, type StoredQuestion } from '../../src/conversation/session-events.ts';
import { facts, stored } from '../support/facts.ts';

const ts = '2026-11-27T12:00:00.000Z';
const key = sessionKey('alice', 'trip');
const v = EVENT_VERSION;
/** The fact `event` as the session stored it at `seq`. */
const fact = (event: SessionEvent, seq: number) => stored(event, seq, ts, key);

describe('webhook events, from stored facts', () => {
  it('turn.completed names the session, its owner and the turn, with the reply cut to 500 characters', () => {
    const e = webhookEventOf(fact(facts.response('t1', 'x'.repeat(600)), 7));
    expect(e).toEqual({
      id: `${key}#7#turn.completed`,
      type: 'turn.completed',
      sessionKey: key,
      timestamp: ts,
      data: {
        sessionId: 'trip',
        principal: 'alice',
        turnId: 't1',
        seq: 7,
        model: 'm',
        summary: 'x'.repeat(500),
        truncated: true,
      },
    });
  });

  it('a question asked is announced without its arguments; one closed by timeout is question.expired', () => {
    const approval: SessionEvent = {
      v,
      type: 'questionAsked',
      turnId: 't1',
      question: {
        ...{ id: 'c1', kind: 'approval', callId: 'c1', serverId: 'ops', toolName: 'deploy' },
        ...{ args: { token: 'sk-secret-value' }, expiresAt: '2026-11-27T12:05:00.000Z' },
      },
    };
    const asked = webhookEventOf(fact(approval, 3));
    expect(asked?.data).toEqual({
      ...{ sessionId: 'trip', principal: 'alice', turnId: 't1', seq: 3, questionId: 'c1', kind: 'approval' },
      ...{ serverId: 'ops', expiresAt: '2026-11-27T12:05:00.000Z', toolName: 'deploy' },
    });
    expect(asked?.type).toBe('question.asked');
    expect(JSON.stringify(asked)).not.toContain('sk-secret-value');
    const elicited = webhookEventOf(fact(facts.elicitation('t1', 'e1'), 4));
    expect(elicited?.data).toMatchObject({ questionId: 'e1', kind: 'elicitation', message: 'Your name?' });
    expect(elicited?.data).not.toHaveProperty('toolName');
    expect(elicited?.data).not.toHaveProperty('requestedSchema');
    const closed = (by: string) => webhookEventOf(fact(facts.approved('t1', 'c1', 'deny', by), 5));
    expect(closed('timeout')).toEqual({
      id: `${key}#5#question.expired`,
      type: 'question.expired',
      sessionKey: key,
      timestamp: ts,
      data: { sessionId: 'trip', principal: 'alice', turnId: 't1', seq: 5, questionId: 'c1' },
    });
    expect(closed('rest')).toBeUndefined();
  });

  it("a budget question is announced with who spent what, the limit and the next step's estimate", () => {
    const budget = { principal: 'alice', budget: 'day', limit: 5, used: 4.98, estimate: 0.03, currency: 'USD' };
    const question: StoredQuestion = {
      ...{ id: 'bu_1', kind: 'budget', callId: 'bu_1', serverId: 'agentd' },
      ...{ args: budget, expiresAt: '2026-11-27T12:05:00.000Z' },
    };
    const asked = webhookEventOf(fact({ v, type: 'questionAsked', turnId: 't1', question }, 5));
    expect(asked).toMatchObject({ type: 'question.asked', data: { questionId: 'bu_1', kind: 'budget', budget } });
    expect(asked?.data).not.toHaveProperty('toolName');
  });

  it('a failed turn is turn.failed with its reason; other facts announce nothing', () => {
    const failed = webhookEventOf(fact(facts.failed('t', 'cancelled', 'cancelled'), 9));
    expect(failed).toMatchObject({
      type: 'turn.failed',
      data: { turnId: 't', seq: 9, code: 'AGENT_ERROR', message: 'cancelled', reason: 'cancelled' },
    });
    expect(webhookEventOf(fact(facts.user('t'), 1))).toBeUndefined();
    expect(webhookEventOf(fact(facts.call('t', 'c1'), 2))).toBeUndefined();
  });

  it('two deletions of one session id are two events', () => {
    const at = Date.parse(ts);
    expect(deletedEvent(key, at, 'a').id).not.toBe(deletedEvent(key, at, 'b').id);
    expect(deletedEvent(key, at, 'a').data).toEqual({ sessionId: 'trip', principal: 'alice' });
  });
});

describe('a delivery after an attempt', () => {
  const d: Delivery = {
    id: 'msg_1',
    webhookId: 'h',
    eventId: 'e',
    type: 'turn.completed',
    status: 'pending',
    attempts: 0,
    createdAt: 0,
    nextAttemptAt: 0,
    body: '{}',
  };
  const schedule = [5_000, 30_000];

  it('is retried after the next wait of the schedule, then given up after its last', () => {
    const failure = { delivered: false, retry: true, statusCode: 503, error: 'HTTP 503' } as const;
    const first = nextState(d, failure, schedule, 1_000);
    expect(first).toMatchObject({ status: 'pending', attempts: 1, nextAttemptAt: 6_000, lastError: 'HTTP 503' });
    const second = nextState(first, failure, schedule, 6_000);
    expect(second).toMatchObject({ status: 'pending', attempts: 2, nextAttemptAt: 36_000 });
    expect(nextState(second, failure, schedule, 36_000)).toMatchObject({ status: 'failed', attempts: 3 });
  });

  it('fails at once on an answer that is not retried (a 4xx but 408 and 429), and is delivered on a 2xx', () => {
    const refused = { delivered: false, retry: false, statusCode: 401, error: 'HTTP 401' } as const;
    expect(nextState(d, refused, schedule, 1)).toMatchObject({ status: 'failed', lastStatusCode: 401 });
    const ok = nextState({ ...d, lastError: 'HTTP 503' }, { delivered: true, statusCode: 204 }, schedule, 9);
    expect(ok).toMatchObject({ status: 'delivered', deliveredAt: 9, attempts: 1, lastStatusCode: 204 });
    expect(ok.lastError).toBeUndefined();
  });
});

describe('webhooks in the agent file', () => {
  const llm = { provider: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1', model: 'm', apiKey: 'k' };
  const secret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
  const loading = (webhook: object) => () => parseConfig({ llm, webhooks: [webhook] });

  it('refuses a bad URL, an unknown event and a missing or malformed secret, naming the key', () => {
    const events = ['turn.completed'];
    expect(loading({ url: 'ftp://x/y', events, secret })).toThrow(/webhooks\[0\]\.url/);
    expect(loading({ url: 'http://127.0.0.1/x', events: ['turn.done'], secret })).toThrow(/webhooks\[0\]\.events\[0\]/);
    expect(loading({ url: 'http://127.0.0.1/x', events })).toThrow(/webhooks\[0\]\.secret: missing/);
    expect(loading({ url: 'http://127.0.0.1/x', events, secret: 'plain' })).toThrow(/webhooks\[0\]\.secret/);
  });

  it('takes the default retry schedule, first retries within seconds', () => {
    const config = parseConfig({ llm, webhooks: [{ url: 'http://127.0.0.1/x', events: ['turn.failed'], secret }] });
    expect(config.webhooks[0]?.retryScheduleMs).toEqual([5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000]);
  });
});
