/**
 * Budgets in money (issue 74 item 2), through the real service and the simulator (each step's cost set with
 * `[[cost:X]]`, as a provider reports it; the worst case priced at `llm.pricing`): a conversation that walks into a
 * principal's daily budget is asked about it (a `budget` question among the session's approvals), goes on when an
 * admin approves, fails with RATE_LIMIT_EXCEEDED when one denies, and runs freely once the limit was raised; the
 * principal itself may not answer; a hard budget refuses at once (429 with limit, used, resetTime); a session budget
 * counts the session alone; the count survives a restart on JSONL and is shared by two instances on Redis.
 */
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { data, replyOf, send, text, v1Client } from '../support/a2a-clients.ts';
import { agUiClient } from '../support/ag-ui-client.ts';
import { roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import { hasRedisServer, startRedis } from '../support/redis.ts';
import type { RunningApp } from '../support/start-app.ts';
import { PATIENT } from '../support/wait.ts';
import { connectWs, type Frame } from '../support/ws-client.ts';

const ALICE = 'budget-alice-key-0123456789';
const BOB = 'budget-bob-key-0123456789';
const CAROL = 'budget-carol-key-0123456789';
const OPS = 'budget-ops-key-0123456789';
const keys = [
  { name: 'alice', key: ALICE, scopes: ['chat'] },
  { name: 'bob', key: BOB, scopes: ['chat'] },
  { name: 'carol', key: CAROL, scopes: ['chat'] },
  { name: 'ops', key: OPS, scopes: ['admin'] },
];
const budgets = {
  timeZone: 'Europe/Berlin',
  default: { day: 0.01 },
  principals: { bob: { day: 0.005, hard: true }, carol: { session: 0.005, hard: true } },
};
const agentFile = (storage: Record<string, unknown>) => ({
  name: 'budgets-agent',
  storage,
  server: { ...roomyLimits, auth: { keys } },
  llm: { timeoutMs: 10_000, maxOutputTokens: 100, pricing: { 'sim-model': { input: 1, output: 1 } } },
  budgets,
});

const env = useSimulatorAndFolder('agentd-budgets-');

/** The one sentence every face asks a budget question with (a limit of $0.01 a day, as `budgets.default` sets). */
const asksAbout = (principal: string) =>
  new RegExp(
    `^${principal}'s daily budget is \\$0\\.01: \\$[\\d.]+ spent so far, and the next model step may cost up to \\$[\\d.]+\\. Let it run\\?`,
  );

const call = async (app: RunningApp, key: string, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${app.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body !== undefined && { 'Content-Type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as any };
};
const sync = (app: RunningApp, key: string, sessionId: string, message: string) =>
  call(app, key, 'POST', '/api/message-sync', { sessionId, message });

/** An MCP client (2026-07-28) with `key` on /mcp that approves every elicitation it is sent; `asked`: their messages. */
async function approvingMcpClient(url: string, key: string) {
  const client = new Client(
    { name: 'budget-desktop', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: { form: {} } } },
  );
  const asked: string[] = [];
  client.setRequestHandler('elicitation/create', (request) => {
    asked.push(request.params.message);
    return { action: 'accept', content: { decision: 'approve' } };
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  return { client, asked };
}

describe('budgets', () => {
  it("asks before a step passes a principal's daily budget: approved it runs, denied the turn fails, raised it runs on", async () => {
    const app = await env.apps.start(agentFile({ type: 'jsonl', dir: join(env.dir, 'soft') }), {
      modelUrl: env.sim.url,
    });
    const ws = await connectWs(`${app.wsUrl}?token=${ALICE}`);
    try {
      expect((await sync(app, ALICE, 'walk', 'one [[cost:0.006]]')).status).toBe(200);
      expect((await sync(app, ALICE, 'walk', 'two [[cost:0.006]]')).status).toBe(200); // 0.006 + its worst case fit
      // 0.012 spent of 0.01: the next step is asked about, before the model is.
      const asked = async (words: string) => {
        const from = ws.frames.length;
        ws.send({ type: 'message', sessionId: 'walk', content: `${words} [[cost:0.001]]` });
        const isBudget = (f: Frame) => f.event === 'toolApprovalRequested' && f.data.toolName === 'agentd/budget';
        return (await ws.next(isBudget, PATIENT.timeout, from)).data;
      };
      const first = await asked('three');
      expect(first.serverId).toBe('agentd');
      expect(first.message).toMatch(asksAbout('alice'));
      expect(first.args).toMatchObject({
        principal: 'alice',
        budget: 'day',
        limit: 0.01,
        used: 0.012,
        currency: 'USD',
      });
      expect(Date.parse(String(first.args.resetTime))).toBeGreaterThan(Date.now());
      const listed = await call(app, ALICE, 'GET', '/api/sessions/walk/approvals');
      expect(listed.body.approvals.map((a: any) => a.toolName)).toEqual(['agentd/budget']);
      const path = (id: unknown) => `/api/sessions/walk/approvals/${String(id)}`;
      // The spender may not let itself pass (budgets.answeredBy: admin).
      const own = await call(app, ALICE, 'POST', path(first.callId), { decision: 'approve' });
      expect(own.status).toBe(403);
      expect(own.body.error.code).toBe('FORBIDDEN');
      // An admin approves: the step runs.
      const key = `/api/sessions/walk/approvals/${String(first.callId)}?owner=alice`;
      expect((await call(app, OPS, 'POST', key, { decision: 'approve' })).status).toBe(200);
      expect((await ws.next((f) => f.event === 'response' && String(f.data.content).includes('three'))).event).toBe(
        'response',
      );
      // Denied: the turn fails with the budget's refusal.
      const second = await asked('four');
      const deny = `/api/sessions/walk/approvals/${String(second.callId)}?owner=alice`;
      expect((await call(app, OPS, 'POST', deny, { decision: 'deny' })).status).toBe(200);
      const failed = await ws.next((f) => f.event === 'error' && f.data.turnId !== undefined);
      expect(failed.data.code).toBe('RATE_LIMIT_EXCEEDED');
      expect(failed.data.details).toMatchObject({ reason: 'budget', budget: 'day', limit: 0.01, remaining: 0 });
      expect(failed.data.details.resetTime).toBeGreaterThan(Date.now() / 1000);
      // Raised for the day: this step and the next run without asking.
      const third = await asked('five');
      const raise = `/api/sessions/walk/approvals/${String(third.callId)}?owner=alice`;
      expect((await call(app, OPS, 'POST', raise, { decision: 'approve', raiseTo: 1 })).status).toBe(200);
      await ws.next((f) => f.event === 'response' && String(f.data.content).includes('five'));
      const six = await sync(app, ALICE, 'walk', 'six [[cost:0.001]]');
      expect(six.status).toBe(200);
      expect(six.body.response).toContain('six');
    } finally {
      ws.close();
      await env.apps.stop(app);
    }
  });

  it('refuses at once past a hard budget, counts a session budget alone, and keeps the count across a restart', async () => {
    const storage = { type: 'jsonl', dir: join(env.dir, 'hard') };
    let app = await env.apps.start(agentFile(storage), { modelUrl: env.sim.url });
    try {
      expect((await sync(app, BOB, 'b1', 'spend [[cost:0.006]]')).status).toBe(200);
      const refused = await sync(app, BOB, 'b2', 'more');
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
      expect(refused.body.error.details).toMatchObject({ reason: 'budget', budget: 'day', limit: 0.005, used: 0.006 });
      expect(typeof refused.body.error.details.resetTime).toBe('number');
      // carol's limit is per session: another session of hers starts from nothing.
      expect((await sync(app, CAROL, 'c1', 'spend [[cost:0.006]]')).status).toBe(200);
      expect((await sync(app, CAROL, 'c1', 'more')).status).toBe(429);
      expect((await sync(app, CAROL, 'c2', 'fresh')).status).toBe(200);

      await env.apps.stop(app);
      app = await env.apps.start(agentFile(storage), { modelUrl: env.sim.url });
      const after = await sync(app, BOB, 'b3', 'after the restart');
      expect(after.status).toBe(429);
      expect(after.body.error.details.used).toBe(0.006);
    } finally {
      await env.apps.stop(app);
    }
  });

  it("an admin answers a budget question over A2A (the face passes the caller's admin scope)", async () => {
    const app = await env.apps.start(agentFile({ type: 'jsonl', dir: join(env.dir, 'a2a') }), {
      modelUrl: env.sim.url,
    });
    try {
      const client = await v1Client(app, OPS);
      expect((await send(client, [text('spend [[cost:0.02]]')])).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const asked = await send(client, [text('more [[reply:went on]]')]);
      expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      const said = asked.status.message.parts.map((p: any) => p.content?.value ?? '').join('');
      expect(said).toMatch(asksAbout('ops'));
      expect(said).toContain('Answer with a data part { "approve": true | false');
      expect(said).not.toContain('agentd/budget');
      const done = await send(client, [data({ approve: true })], { taskId: asked.id, contextId: asked.contextId });
      expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(replyOf(done)).toBe('went on');
    } finally {
      await env.apps.stop(app);
    }
  });

  it("an admin answers a budget question over /mcp through elicitation (the face passes the caller's admin scope)", async () => {
    const app = await env.apps.start(agentFile({ type: 'jsonl', dir: join(env.dir, 'mcp') }), {
      modelUrl: env.sim.url,
    });
    const { client, asked } = await approvingMcpClient(app.url, OPS);
    try {
      const chat = (message: string) =>
        client.callTool({ name: 'chat_with_agent', arguments: { message, sessionId: 'mcp-walk' } });
      await chat('spend [[cost:0.02]]');
      const result = (await chat('more [[reply:went on]]')) as { content: { text: string }[] };
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatch(asksAbout('ops'));
      expect(asked[0]).not.toContain('agentd/budget');
      expect(result.content[0]?.text).toContain('went on');
    } finally {
      await client.close();
      await env.apps.stop(app);
    }
  });

  it("a non-admin's budget answer over /mcp is refused at once: the call ends with the refusal, not after budgets.timeoutMs", async () => {
    const file = agentFile({ type: 'jsonl', dir: join(env.dir, 'mcp-alice') });
    const app = await env.apps.start(
      { ...file, budgets: { ...budgets, timeoutMs: 60_000 } },
      { modelUrl: env.sim.url },
    );
    const { client, asked } = await approvingMcpClient(app.url, ALICE);
    try {
      const chat = (message: string) =>
        client.callTool({ name: 'chat_with_agent', arguments: { message, sessionId: 'mcp-alice' } });
      await chat('spend [[cost:0.02]]');
      const started = Date.now();
      const result = (await chat('more [[reply:went on]]')) as { isError?: boolean; content: { text: string }[] };
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatch(asksAbout('alice'));
      expect(result.isError).toBe(true);
      expect(result.content[0]?.text).toContain('Only an admin may answer a budget question');
      expect(Date.now() - started).toBeLessThan(30_000); // not budgets.timeoutMs
    } finally {
      await client.close();
      await env.apps.stop(app);
    }
  }, 90_000);

  it("an admin answers a budget question over AG-UI by resuming its interrupt (the face passes the caller's admin scope)", async () => {
    const app = await env.apps.start(agentFile({ type: 'jsonl', dir: join(env.dir, 'ag-ui') }), {
      modelUrl: env.sim.url,
    });
    try {
      const c = agUiClient(app, { key: OPS });
      c.say('spend [[cost:0.02]]');
      await c.agent.runAgent();
      c.say('more [[reply:went on]]');
      await c.agent.runAgent();
      const [interrupt] = c.agent.pendingInterrupts;
      expect(interrupt).toMatchObject({ reason: 'budget', message: expect.stringMatching(asksAbout('ops')) });
      const from = c.events.length;
      await c.agent.runAgent({
        resume: [{ interruptId: interrupt!.id, status: 'resolved', payload: { approved: true } }],
      });
      const resumed = c.events.slice(from) as { type: string; delta?: string }[];
      expect(resumed.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
      const text = resumed.flatMap((e) => (e.type === 'TEXT_MESSAGE_CONTENT' ? [e.delta] : []));
      expect(text.join('')).toBe('went on'); // the step that runs once approved streams its reply into this run
    } finally {
      await env.apps.stop(app);
    }
  });

  it.skipIf(!hasRedisServer())('shares the count between two instances on one Redis', async () => {
    const redis = await startRedis();
    const storage = { type: 'redis', url: redis.url, keyPrefix: `budgets${Date.now()}:` };
    const a = await env.apps.start(agentFile(storage), { modelUrl: env.sim.url });
    const b = await env.apps.start(agentFile(storage), { modelUrl: env.sim.url });
    try {
      expect((await sync(a, BOB, 'r1', 'spend on a [[cost:0.006]]')).status).toBe(200);
      await expect.poll(async () => (await sync(b, BOB, `r-${Date.now()}`, 'on b')).status, PATIENT).toBe(429);
    } finally {
      await env.apps.stop(a);
      await env.apps.stop(b);
      await redis.stop();
    }
  });
});
