/**
 * Budgets reserve before they spend (issue 85 item 1, src/spend/holds.ts, ledger.ts `reserve`): a step that passes
 * holds its worst case for its principal until its entry settles it, so steps at once never start on the same room —
 * in one process, and across instances on one shared record store (Redis, PostgreSQL); a hold frees itself after
 * HOLD_MS and when its session's step is stored without a usage.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/index.ts';
import { records } from '../../src/store/index.ts';
import { createBudgetGate, createLedger, spendReaction, type SpendEntry } from '../../src/spend/index.ts';
import { HOLD_MS } from '../../src/spend/holds.ts';
import { budgetsSchema } from '../../src/config/budgets-schema.ts';
import { sessionKey } from '../../src/session-id.ts';
import { facts, stored } from '../support/facts.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { hasPostgres, startPostgres, type PostgresServer } from '../support/postgres.ts';

const log = createLogger('silent');
/** Now: the record stores expire records by their own clock, the holds by the gate's. */
const NOON = Date.now();
const config = budgetsSchema.parse({ default: { day: 2, hard: true } })!;
const alice = (session: string) => sessionKey('alice', session);
const step = (session: string, amount: number, at = NOON): SpendEntry => ({
  ...{ principal: 'alice', sessionId: alice(session), kind: 'step', model: 'm', at, amount, currency: 'USD' },
  ...{ source: 'provider', promptTokens: 10, completionTokens: 5 },
});
const reserve = (gate: ReturnType<typeof createBudgetGate>, session: string, estimate: number) =>
  gate.reserve({ sessionKey: alice(session), sessionSpent: 0, estimate });

describe('budget holds on one record store', () => {
  const gateOn = (now: () => number = () => NOON) => {
    const ledger = createLedger(records.createMemoryRecordStore({ log }), { timeZone: 'UTC', log });
    return { ledger, gate: createBudgetGate(config, ledger, now) };
  };

  it("a step that passes holds its worst case: another session's step is refused on that room, naming it", async () => {
    const { gate } = gateOn();
    expect(await reserve(gate, 's1', 1.5)).toBeUndefined();
    expect(await reserve(gate, 's2', 0.6)).toMatchObject({ budget: 'day', used: 0, reserved: 1.5, limit: 2 });
    expect(await reserve(gate, 's1', 1.9)).toBeUndefined(); // its own next step replaces its hold
  });

  it("a step's entry settles its hold in the same commit: spent once, never held and spent", async () => {
    const { gate, ledger } = gateOn();
    expect(await reserve(gate, 's1', 1.5)).toBeUndefined();
    await ledger.record(`${alice('s1')}#2`, step('s1', 0.4));
    expect(await reserve(gate, 's2', 1.6)).toBeUndefined(); // 0.4 spent + 1.6: the hold of 1.5 is gone
    expect(await reserve(gate, 's3', 0.1)).toMatchObject({ used: 0.4, reserved: 1.6 });
  });

  it('a hold frees itself after HOLD_MS, and a step stored without a usage ends it', async () => {
    let now = NOON;
    const { gate, ledger } = gateOn(() => now);
    expect(await reserve(gate, 's1', 1.5)).toBeUndefined();
    expect(await reserve(gate, 's2', 1)).toBeDefined();
    now += HOLD_MS + 1;
    expect(await reserve(gate, 's2', 1)).toBeUndefined();
    const ended = stored(facts.response('t1', 'no usage reported'), 3, new Date(now).toISOString(), alice('s2'));
    await spendReaction(ledger).handle(ended);
    expect(await reserve(gate, 's3', 1.9)).toBeUndefined();
  });

  it('30 steps at once on one instance: 8 of 0.24 pass a hard budget of 2, the rest are refused', async () => {
    const { gate } = gateOn();
    const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => reserve(gate, `c${i}`, 0.24)));
    expect(outcomes.filter((o) => o === undefined)).toHaveLength(8);
  });
});

/** Two instances' gates over one shared record store, `make` opening a store on it. */
function acrossInstances(engine: string, enabled: boolean, make: () => Promise<() => records.RecordStore>) {
  describe.skipIf(!enabled)(`budget holds across two instances on ${engine}`, () => {
    it('60 steps at once, half on each instance: 8 of 0.24 pass a hard budget of 2', async () => {
      const open = await make();
      const stores = [open(), open()];
      await Promise.all(stores.map((s) => s.open()));
      const gates = stores.map((s) => createBudgetGate(config, createLedger(s, { timeZone: 'UTC', log }), () => NOON));
      const outcomes = await Promise.all(Array.from({ length: 60 }, (_, i) => reserve(gates[i % 2]!, `c${i}`, 0.24)));
      expect(outcomes.filter((o) => o === undefined)).toHaveLength(8);
      await Promise.all(stores.map((s) => s.close()));
    });
  });
}

let redis: RedisServer | undefined;
let postgres: PostgresServer | undefined;
beforeAll(async () => {
  if (hasRedisServer()) redis = await startRedis();
  if (hasPostgres()) postgres = await startPostgres();
}, 120_000);
afterAll(async () => {
  await redis?.stop();
  await postgres?.stop();
});
acrossInstances('redis', hasRedisServer(), () => {
  const keyPrefix = `t${randomUUID()}:`;
  return Promise.resolve(() => records.createRedisRecordStore({ url: redis!.url, keyPrefix, log }));
});
acrossInstances('postgres', hasPostgres(), async () => {
  const schema = await postgres!.freshSchema();
  return () => records.createPostgresRecordStore({ url: postgres!.url, schema, pool: 4, log });
});
