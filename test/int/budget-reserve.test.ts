/**
 * Budgets reserve before they spend (issue 85 item 1), through the real service: many turns of one principal at once
 * — 30 concurrent message-sync turns, 60 async messages in one burst, on one instance and on two sharing Redis — spend
 * within a hard daily budget of 2 USD, where each step used to pass the check before the first was stored (7.20 and
 * 10.08 USD were spent). Each step costs 0.24 USD (`[[cost:0.24]]`, as a provider reports it) and its worst case,
 * priced at `llm.pricing`, a little more: a step that starts holds room for all it can cost, so none passes the limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import { hasRedisServer, startRedis } from '../support/redis.ts';
import type { RunningApp } from '../support/start-app.ts';
import { PATIENT } from '../support/wait.ts';

const DAVE = 'reserve-dave-key-0123456789';
const LIMIT = 2;
/** A step's worst case, (about 40 prompt tokens + 100 output) at 2000 USD per million tokens, is about 0.28 USD. */
const agentFile = (storage: Record<string, unknown>) => ({
  name: 'reserve-agent',
  storage,
  server: { ...roomyLimits, auth: { keys: [{ name: 'dave', key: DAVE, scopes: ['chat'] }] } },
  llm: { timeoutMs: 20_000, maxOutputTokens: 100, pricing: { 'sim-model': { input: 2000, output: 2000 } } },
  budgets: { default: { day: LIMIT, hard: true } },
});

const env = useSimulatorAndFolder('agentd-reserve-');

const call = async (app: RunningApp, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${app.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${DAVE}`, ...(body !== undefined && { 'Content-Type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as any };
};
/** Each step takes a while (its first word after 300 ms): every check of the burst comes before any step is stored. */
const MESSAGE = 'spend [[cost:0.24]] [[ttft:300]]';
/** What dave spent today, as the usage report sums it. */
const spent = async (app: RunningApp): Promise<number> =>
  ((await call(app, 'GET', '/api/usage')).body.totals as { amount: number }[])[0]?.amount ?? 0;

/** Sends `count` async messages at once, spread over `apps`, and waits until no session of theirs is busy. */
async function burst(apps: RunningApp[], count: number, prefix: string): Promise<void> {
  const accepted = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      call(apps[i % apps.length]!, 'POST', '/api/message', { sessionId: `${prefix}${i}`, message: MESSAGE }),
    ),
  );
  expect(accepted.every((a) => [200, 202, 429].includes(a.status))).toBe(true); // 429: the server's own limits
  const idle = async (app: RunningApp) =>
    ((await call(app, 'GET', '/api/sessions')).body.sessions as any[]).every((s) => !s.busy);
  for (const app of apps) await expect.poll(() => idle(app), { ...PATIENT, timeout: 120_000 }).toBe(true);
}

describe('budgets under many steps at once', { timeout: 180_000 }, () => {
  it('30 concurrent message-sync turns on one instance spend within the hard budget', async () => {
    const app = await env.apps.start(agentFile({ type: 'memory' }), { modelUrl: env.sim.url });
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        call(app, 'POST', '/api/message-sync', { sessionId: `m${i}`, message: MESSAGE }),
      ),
    );
    const ran = answers.filter((a) => a.status === 200).length;
    expect(answers.every((a) => a.status === 200 || a.status === 429)).toBe(true);
    expect(ran).toBeGreaterThan(0);
    expect(ran).toBeLessThan(30);
    expect(await spent(app)).toBeLessThanOrEqual(LIMIT);
    const refused = answers.find((a) => a.status === 429)!.body.error.details;
    expect(refused).toMatchObject({ reason: 'budget', budget: 'day', limit: LIMIT });
  });

  it('60 async messages in one burst on one instance spend within the hard budget', async () => {
    const app = await env.apps.start(agentFile({ type: 'memory' }), { modelUrl: env.sim.url });
    await burst([app], 60, 'b');
    const total = await spent(app);
    expect(total).toBeGreaterThan(0);
    expect(total).toBeLessThanOrEqual(LIMIT);
  });

  describe.skipIf(!hasRedisServer())('across two instances on one Redis', () => {
    let redis: Awaited<ReturnType<typeof startRedis>> | undefined;
    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(async () => {
      await redis?.stop();
    });
    /** Two instances on their own key prefix (their own ledger). */
    const pair = async (name: string) => {
      const storage = { type: 'redis', url: redis!.url, keyPrefix: `reserve-${name}:` };
      return [
        await env.apps.start(agentFile(storage), { modelUrl: env.sim.url }),
        await env.apps.start(agentFile(storage), { modelUrl: env.sim.url }),
      ];
    };

    it('30 concurrent message-sync turns, half on each, spend within the hard budget', async () => {
      const apps = await pair('sync');
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          call(apps[i % 2]!, 'POST', '/api/message-sync', { sessionId: `r${i}`, message: MESSAGE }),
        ),
      );
      expect(answers.filter((a) => a.status === 200).length).toBeLessThan(30);
      expect(await spent(apps[0]!)).toBeLessThanOrEqual(LIMIT);
    });

    it('60 async messages in one burst, half on each, spend within the hard budget', async () => {
      const apps = await pair('burst');
      await burst(apps, 60, 'rb');
      const total = await spent(apps[1]!);
      expect(total).toBeGreaterThan(0);
      expect(total).toBeLessThanOrEqual(LIMIT);
    });
  });
});
