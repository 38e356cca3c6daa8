/**
 * Token budgets (issue 24, item 5) through the real service against the simulator's usage figures:
 * a turn past `turnTokens` is stopped between its steps, and once a session has used
 * `sessionTokens` its next turn is refused before any model request; both with AGENT_ERROR,
 * `details.reason: "token_budget"`, the limit and what was used. Prompt-cache tokens count.
 */
import { describe, expect, it } from 'vitest';
import { api, requestsWith, roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import { fixturePath } from '../support/paths.ts';

const env = useSimulatorAndFolder('agentd-budgets-');

describe('token budgets', () => {
  it('stops a turn between its steps once the next request would pass turnTokens', async () => {
    const echo = { type: 'stdio', command: process.execPath, args: [fixturePath('echo-server')] };
    const app = await env.apps.start(
      { mcpServers: { echo }, server: roomyLimits, llm: { budget: { turnTokens: 400 } } },
      { modelUrl: env.sim.url },
    );
    // The first request (~150 tokens) fits; its tool call and the echoed result (~100 tokens each)
    // make the second one pass the turn's budget.
    const reply = await api(app.url, 'POST', '/api/message-sync', {
      sessionId: 'turn',
      message: `budget-turn [[tool:echo {"message":"${'x'.repeat(400)}"}]]`,
    });
    expect(reply.status).toBe(500);
    expect(reply.body.error).toMatchObject({
      code: 'AGENT_ERROR',
      details: { reason: 'token_budget', budget: 'turn', limit: 400 },
    });
    expect(reply.body.error.details.used).toBeGreaterThan(0);
    expect(requestsWith(env.sim, 'budget-turn')).toHaveLength(1); // the second request was never sent
    // A small turn fits (in a fresh session: this one's history now holds the large message).
    expect((await api(app.url, 'POST', '/api/message-sync', { sessionId: 'small', message: 'small' })).status).toBe(
      200,
    );
  });

  it('counts prompt tokens read from or written to the prompt cache (api: messages)', async () => {
    const echo = { type: 'stdio', command: process.execPath, args: [fixturePath('echo-server')] };
    const app = await env.apps.start(
      { mcpServers: { echo }, server: roomyLimits, llm: { api: 'messages', budget: { turnTokens: 900 } } },
      { modelUrl: env.sim.url },
    );
    // The first request (~550 tokens) is written to the prompt cache whole, so its `input_tokens`
    // are a few; its tool call is short. Only counting the cache-write tokens makes the second
    // request (~570 tokens) pass the turn's budget.
    const reply = await api(app.url, 'POST', '/api/message-sync', {
      sessionId: 'cached',
      message: `budget-cache ${'word '.repeat(400)} [[tool:echo {"message":"hi"}]]`,
    });
    expect(reply.status).toBe(500);
    expect(reply.body.error.details).toMatchObject({ reason: 'token_budget', budget: 'turn', limit: 900 });
    expect(requestsWith(env.sim, 'budget-cache')).toHaveLength(1);
    const listed = await api(app.url, 'GET', '/api/sessions');
    const usage = (listed.body.sessions as { id: string; usage?: Record<string, number> }[]).find(
      (x) => x.id === 'cached',
    )?.usage;
    expect(usage?.cacheWriteTokens).toBeGreaterThan(400);
    expect(reply.body.error.details.used).toBe(usage?.totalTokens);
  });

  it('refuses a turn before its first request once the session has used sessionTokens', async () => {
    const app = await env.apps.start(
      { server: roomyLimits, llm: { budget: { sessionTokens: 120 } } },
      { modelUrl: env.sim.url },
    );
    let refused: { status: number; body: any } | undefined;
    for (let i = 0; i < 20 && !refused; i++) {
      const reply = await api(app.url, 'POST', '/api/message-sync', {
        sessionId: 'session',
        message: `budget-session ${i} ${'words '.repeat(10)}`,
      });
      if (reply.status !== 200) refused = reply;
    }
    expect(refused?.status).toBe(500);
    expect(refused?.body.error).toMatchObject({
      code: 'AGENT_ERROR',
      details: { reason: 'token_budget', budget: 'session', limit: 120 },
    });
    const sent = requestsWith(env.sim, 'budget-session').length;
    // Refused again, and no request reaches the model.
    const again = await api(app.url, 'POST', '/api/message-sync', {
      sessionId: 'session',
      message: 'budget-session again',
    });
    expect(again.body.error.details.reason).toBe('token_budget');
    expect(requestsWith(env.sim, 'budget-session')).toHaveLength(sent);
    // Another session has its own budget.
    expect((await api(app.url, 'POST', '/api/message-sync', { sessionId: 'other', message: 'hi' })).status).toBe(200);
  });
});
