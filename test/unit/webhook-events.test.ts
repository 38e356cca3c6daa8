/** What a webhook announces (src/webhooks/events.ts) and how a delivery moves after an attempt (dispatcher.ts). */
import { describe, expect, it } from 'vitest';
import { nextState } from '../../src/webhooks/dispatcher.ts';
import { deletedEvent, webhookEventOf } from '../../src/webhooks/events.ts';
import type { Delivery } from '../../src/webhooks/outbox-store.ts';
import { sessionKey } from '../../src/session-id.ts';
import { parseConfig } from '../../src/config/index.ts';

const at = Date.parse('2026-11-27T12:00:00.000Z');
const key = sessionKey('alice', 'trip');

describe('webhook events', () => {
  it('turn.completed names the session, its owner and the turn, with the reply cut to 500 characters', () => {
    const e = webhookEventOf(
      'agent.response',
      { sessionId: key, turnId: 't1', seq: 7, content: 'x'.repeat(600), model: 'm' },
      at,
    );
    expect(e).toMatchObject({
      id: `${key}#7#turn.completed`,
      type: 'turn.completed',
      timestamp: '2026-11-27T12:00:00.000Z',
      data: { sessionId: 'trip', principal: 'alice', turnId: 't1', seq: 7, truncated: true },
    });
    expect((e?.data.summary as string).length).toBe(500);
  });

  it('a question asked is announced without its arguments; one closed by timeout is question.expired', () => {
    const asked = webhookEventOf(
      'agent.toolApprovalRequested',
      {
        sessionId: key,
        turnId: 't1',
        seq: 3,
        callId: 'c1',
        toolName: 'deploy',
        serverId: 'ops',
        args: { token: 'sk-secret-value' },
        expiresAt: '2026-11-27T12:05:00.000Z',
      },
      at,
    );
    expect(asked).toMatchObject({
      type: 'question.asked',
      data: { questionId: 'c1', kind: 'approval', toolName: 'deploy', serverId: 'ops' },
    });
    expect(JSON.stringify(asked)).not.toContain('sk-secret-value');
    const closed = (by: string) =>
      webhookEventOf(
        'agent.toolApprovalResolved',
        { sessionId: key, turnId: 't1', seq: 4, callId: 'c1', decision: 'deny', by },
        at,
      );
    expect(closed('timeout')).toMatchObject({ type: 'question.expired', data: { questionId: 'c1', turnId: 't1' } });
    expect(closed('rest')).toBeUndefined();
  });

  it("a budget question is announced with who spent what, the limit and the next step's estimate", () => {
    const budget = { principal: 'alice', budget: 'day', limit: 5, used: 4.98, estimate: 0.03, currency: 'USD' };
    const asked = webhookEventOf(
      'agent.toolApprovalRequested',
      {
        ...{ sessionId: key, turnId: 't1', seq: 5, callId: 'bu_1', toolName: 'agentd/budget', serverId: 'agentd' },
        ...{ args: budget, expiresAt: '2026-11-27T12:05:00.000Z' },
      },
      at,
    );
    expect(asked).toMatchObject({ type: 'question.asked', data: { questionId: 'bu_1', kind: 'budget', budget } });
  });

  it('an error of a turn is turn.failed; other frames announce nothing', () => {
    const failed = webhookEventOf(
      'agent.error',
      {
        code: 'AGENT_ERROR',
        message: 'cancelled',
        details: { reason: 'cancelled' },
        sessionId: key,
        turnId: 't',
        seq: 9,
      },
      at,
    );
    expect(failed).toMatchObject({ type: 'turn.failed', data: { code: 'AGENT_ERROR', reason: 'cancelled' } });
    const noTurn = { code: 'INVALID_REQUEST', message: 'bad frame', details: {}, sessionId: key };
    expect(webhookEventOf('agent.error', noTurn, at)).toBeUndefined();
    expect(webhookEventOf('agent.chunk', { sessionId: key, turnId: 't', seq: 1, content: 'x' }, at)).toBeUndefined();
  });

  it('two deletions of one session id are two events', () => {
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
