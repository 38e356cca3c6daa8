/**
 * Every model step priced (issue 74 item 1), through the real service and the simulator: the `response` frame's
 * cost (from `llm.pricing`, cache reads at their rate; or the provider's own, as OpenRouter reports it), the
 * session's summed cost in `GET /api/sessions` and its history, `agentd_model_cost_total` by model, principal and
 * currency on `/metrics`, and bad `llm.pricing` refused at start naming the key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { connectWs, type WsClient } from '../support/ws-client.ts';

const ALICE = 'cost-alice-key-0123456789';
const OPS = 'cost-ops-key-0123456789';
const PRICE = { input: 2, cachedInput: 0.5, output: 10 };

type Usage = { promptTokens: number; completionTokens: number; cachedTokens?: number; cost?: Record<string, unknown> };

describe('the cost of every model step', () => {
  let sim: Simulator;
  let svc: RunningApp;
  let ws: WsClient;
  beforeAll(async () => {
    sim = await startSimulator();
    svc = await startApp(
      {
        server: {
          limits: { rest: { points: 10_000 } },
          auth: {
            keys: [
              { name: 'alice', key: ALICE, scopes: ['chat'] },
              { name: 'ops', key: OPS, scopes: ['admin'] },
            ],
          },
        },
        llm: { pricing: { 'sim-model': PRICE } },
      },
      { modelUrl: sim.url },
    );
    ws = await connectWs(`${svc.wsUrl}?token=${ALICE}`);
  });
  afterAll(async () => {
    ws?.close();
    await svc?.stop();
    await sim?.close();
  });

  const get = async (path: string, key: string) =>
    (await fetch(`${svc.url}${path}`, { headers: { Authorization: `Bearer ${key}` } })).json();
  /** The usage of the `response` to `words` (the simulator echoes them) and its directives. */
  const turn = async (words: string, directives: string): Promise<Usage> => {
    ws.send({ type: 'message', sessionId: 'priced', content: `${words} ${directives}` });
    const frame = await ws.next((f) => f.event === 'response' && String(f.data.content).includes(words));
    return frame.data.usage as Usage;
  };
  const priced: number[] = [];

  it('prices a step at llm.pricing, cache reads at their own rate, in the response frame', async () => {
    const usage = await turn('hello', '[[cached:4]]');
    expect(usage.cachedTokens).toBe(4);
    const expected =
      ((usage.promptTokens - 4) * PRICE.input + 4 * PRICE.cachedInput + usage.completionTokens * PRICE.output) / 1e6;
    expect(usage.cost).toEqual({ amount: expect.closeTo(expected, 12), currency: 'USD', source: 'config' });
    priced.push(expected);
  });

  it('keeps the cost the provider reports itself (OpenRouter usage.cost)', async () => {
    const usage = await turn('again', '[[cost:0.0042]]');
    expect(usage.cost).toEqual({ amount: 0.0042, currency: 'USD', source: 'provider' });
    priced.push(0.0042);
  });

  it("sums the session's cost per currency in GET /api/sessions, and the history's frames carry each step's", async () => {
    const sum = priced.reduce((a, b) => a + b, 0);
    const listed = (await get('/api/sessions', ALICE)) as { sessions: { id: string; usage?: { costs?: unknown } }[] };
    const session = listed.sessions.find((s) => s.id === 'priced');
    expect(session?.usage?.costs).toEqual([{ amount: expect.closeTo(sum, 12), currency: 'USD' }]);
    const history = (await get('/api/sessions/priced/history', ALICE)) as {
      events: { event: string; data: { usage?: Usage } }[];
    };
    const sources = history.events.filter((f) => f.event === 'response').map((f) => f.data.usage?.cost?.source);
    expect(sources).toEqual(['config', 'provider']);
  });

  it('counts agentd_model_cost_total by model, principal and currency', async () => {
    const res = await fetch(`${svc.url}/metrics`, { headers: { Authorization: `Bearer ${OPS}` } });
    const text = await res.text();
    const series = /^agentd_model_cost_total\{model="sim-model",principal="alice",currency="USD"\} (\S+)$/m.exec(text);
    expect(Number(series?.[1])).toBeCloseTo(
      priced.reduce((a, b) => a + b, 0),
      12,
    );
  });

  it('refuses bad llm.pricing at start, naming the key', async () => {
    const start = async (pricing: unknown) => startApp({ llm: { pricing } }, { modelUrl: sim.url });
    await expect(start({ 'sim-model': { input: 'cheap', output: 1 } })).rejects.toThrow(
      /llm\.pricing\.sim-model\.input/,
    );
    await expect(start({ 'sim-model': { input: 1, output: 1, currency: 'usd' } })).rejects.toThrow(
      /llm\.pricing\.sim-model\.currency: .*ISO 4217/,
    );
  });
});
