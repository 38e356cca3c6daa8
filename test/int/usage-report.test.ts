/**
 * The usage report (issue 74 item 3), through the real service and the simulator (each step's cost set with
 * `[[cost:X]]`): `GET /api/usage` grouped by day, model and session adds up exactly to the costs of the `response`
 * frames; an admin sees everyone's or the principal it names, anyone else only itself (naming another: 403) with its
 * budgets; a bad `from`, `to` or `groupBy` is refused with `details.field`; the typed client reaches the route.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentdClient } from '../../src/client/index.ts';
import { roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import { PATIENT } from '../support/wait.ts';

const ALICE = 'usage-alice-key-0123456789';
const BOB = 'usage-bob-key-0123456789';
const OPS = 'usage-ops-key-0123456789';
const keys = [
  { name: 'alice', key: ALICE, scopes: ['chat'] },
  { name: 'bob', key: BOB, scopes: ['chat'] },
  { name: 'ops', key: OPS, scopes: ['admin'] },
];

const env = useSimulatorAndFolder('agentd-usage-');

/** Amounts in whole units of 1e-12 (the precision costs are kept with): sums that do not depend on the order. */
const units = (amount: number) => Math.round(amount * 1e12);
const total = (amounts: number[]) => amounts.reduce((a, b) => a + units(b), 0);

describe('GET /api/usage', () => {
  it('adds up to the costs of the responses by day, model and session; a principal sees only itself', async () => {
    const app = await env.apps.start(
      {
        name: 'usage-agent',
        storage: { type: 'jsonl', dir: join(env.dir, 'report') },
        server: { ...roomyLimits, auth: { keys } },
        llm: { timeoutMs: 10_000, maxOutputTokens: 100, pricing: { 'sim-model': { input: 1, output: 1 } } },
        budgets: { timeZone: 'Europe/Berlin', default: { day: 1, month: 5 } },
      },
      { modelUrl: env.sim.url },
    );
    const call = async (key: string, path: string, init: RequestInit = {}) => {
      const res = await fetch(`${app.url}${path}`, {
        ...init,
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const say = async (key: string, sessionId: string, message: string) =>
      expect(
        (await call(key, '/api/message-sync', { method: 'POST', body: JSON.stringify({ sessionId, message }) })).status,
      ).toBe(200);
    try {
      await say(ALICE, 'a1', 'one [[cost:0.0011]]');
      await say(ALICE, 'a1', 'two [[cost:0.0023]]');
      await say(ALICE, 'a2', 'three [[cost:0.000317]]');
      await say(BOB, 'b1', 'four [[cost:0.0041]]');
      // What each session's responses cost, read off their frames.
      const costsOf = async (key: string, sessionId: string) => {
        const { body } = await call(key, `/api/sessions/${sessionId}/history`);
        return (body.events as any[]).filter((f) => f.event === 'response').map((f) => f.data.usage.cost.amount);
      };
      const spent = {
        a1: await costsOf(ALICE, 'a1'),
        a2: await costsOf(ALICE, 'a2'),
        b1: await costsOf(BOB, 'b1'),
      };
      expect(spent.a1).toHaveLength(2);
      const everyone = total([...spent.a1, ...spent.a2, ...spent.b1]);

      // The ledger is filled by a reaction to the stored facts: the report has them all soon after.
      const report = async (key: string, query = '') => call(key, `/api/usage${query}`);
      await expect.poll(async () => (await report(OPS, '?groupBy=session')).body.steps, PATIENT).toBe(4);
      for (const groupBy of ['day', 'model', 'session']) {
        const { status, body } = await report(OPS, `?groupBy=${groupBy}`);
        expect(status).toBe(200);
        expect(body.principal).toBeUndefined();
        expect(body.groupBy).toBe(groupBy);
        expect(body.totals.map((t: any) => t.currency)).toEqual(['USD']);
        expect(units(body.totals[0].amount)).toBe(everyone);
        const grouped = (body.groups as any[]).flatMap((g) => g.costs.map((c: any) => c.amount));
        expect(total(grouped)).toBe(everyone);
        expect((body.groups as any[]).reduce((a, g) => a + g.steps, 0)).toBe(4);
        expect(body.truncated).toBe(false);
      }
      const bySession = (await report(OPS, '?groupBy=session')).body.groups as any[];
      expect(bySession.map((g) => [g.principal, g.key, units(g.costs[0].amount), g.steps])).toEqual([
        ['alice', 'a1', total(spent.a1), 2],
        ['alice', 'a2', total(spent.a2), 1],
        ['bob', 'b1', total(spent.b1), 1],
      ]);
      const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(new Date());
      expect((await report(OPS, '?groupBy=day')).body.groups.map((g: any) => g.key)).toEqual([today]);
      expect((await report(OPS, '?groupBy=model')).body.groups.map((g: any) => g.key)).toEqual(['sim-model']);

      // alice sees her own spend, and her standing against her budgets.
      const own = (await report(ALICE, '?groupBy=session')).body;
      expect(own.principal).toBe('alice');
      expect(own.groups.map((g: any) => g.key)).toEqual(['a1', 'a2']);
      const hers = total([...spent.a1, ...spent.a2]);
      expect(units(own.totals[0].amount)).toBe(hers);
      expect(own.budgets).toMatchObject({
        principal: 'alice',
        currency: 'USD',
        timeZone: 'Europe/Berlin',
        hard: false,
      });
      expect(units(own.budgets.day.spent)).toBe(hers);
      expect(units(own.budgets.month.spent)).toBe(hers);
      expect(own.budgets.day).toMatchObject({ limit: 1 });
      expect(units(own.budgets.day.remaining)).toBe(units(1) - hers);
      expect(Date.parse(own.budgets.day.resetTime)).toBeGreaterThan(Date.now());
      expect(Date.parse(own.from)).toBeLessThanOrEqual(Date.now());
      expect((await report(ALICE, '?principal=alice')).status).toBe(200);
      // Another principal's spend is refused before anything is read; an admin names anyone.
      const refused = await report(ALICE, '?principal=bob');
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({ code: 'FORBIDDEN', details: { field: 'principal' } });
      const bobs = (await report(OPS, '?principal=bob&groupBy=session')).body;
      expect(bobs.principal).toBe('bob');
      expect(bobs.groups.map((g: any) => [g.principal, g.key])).toEqual([['bob', 'b1']]);
      expect(bobs.budgets.principal).toBe('bob');

      // A range with nothing in it, and bad ranges refused naming the field.
      const empty = (await report(OPS, '?from=2000-01-01&to=2000-02-01T00:00:00Z')).body;
      expect(empty).toMatchObject({ totals: [], groups: [], steps: 0, from: '1999-12-31T23:00:00.000Z' });
      for (const [query, field] of [
        ['?from=yesterday', 'from'],
        ['?to=2026-02-30', 'to'],
        ['?from=2026-11-01T09:00:00', 'from'], // no zone
        ['?from=2030-01-01&to=2029-01-01', 'from'],
        ['?groupBy=week', 'groupBy'],
      ]) {
        const bad = await report(ALICE, query);
        expect(bad.status, query).toBe(400);
        expect(bad.body.error, query).toMatchObject({ code: 'INVALID_REQUEST', details: { field } });
      }

      // The typed client reaches it.
      const client = new AgentdClient({ baseUrl: app.url, apiKey: ALICE });
      const byModel = await client.api.usage({ query: { groupBy: 'model' } });
      expect(byModel.groups.map((g) => g.key)).toEqual(['sim-model']);
      expect(units(byModel.totals[0]!.amount)).toBe(hers);
    } finally {
      await env.apps.stop(app);
    }
  });

  it('shows the tokens of a model without a price, its cost unknown (unpricedSteps), not 0 tokens', async () => {
    const app = await env.apps.start(
      { storage: { type: 'jsonl', dir: join(env.dir, 'unpriced') }, server: roomyLimits, llm: { timeoutMs: 10_000 } },
      { modelUrl: env.sim.url },
    );
    try {
      const client = new AgentdClient({ baseUrl: app.url });
      await client.api.messageSync({ body: { sessionId: 'u1', message: 'one' } });
      await client.api.messageSync({ body: { sessionId: 'u1', message: 'two [[len:20]]' } });
      const { events } = await client.api.history({ sessionId: 'u1' });
      const usages = events.filter((f) => f.event === 'response').map((f) => (f.data as any).usage);
      expect(usages.map((u) => u.cost)).toEqual([undefined, undefined]); // sim-model has no price
      const tokens = (key: 'promptTokens' | 'completionTokens') => usages.reduce((a, u) => a + u[key], 0);
      await expect.poll(async () => (await client.api.usage({ query: {} })).steps, PATIENT).toBe(2);
      const report = await client.api.usage({ query: { groupBy: 'model' } });
      const counted = { steps: 2, unpricedSteps: 2, promptTokens: tokens('promptTokens') };
      expect(report).toMatchObject({ totals: [], ...counted, completionTokens: tokens('completionTokens') });
      expect(report.groups).toMatchObject([{ key: 'sim-model', costs: [], ...counted }]);
      expect(counted.promptTokens).toBeGreaterThan(0);
    } finally {
      await env.apps.stop(app);
    }
  });
});
