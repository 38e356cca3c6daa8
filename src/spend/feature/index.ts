/**
 * Spend as a feature (Feature, src/http/feature-mount.ts): the ledger of model steps (priced or not) on the sessions'
 * record store, filled by its reaction and read by the usage report (both in its mount), and with `budgets` its port:
 * the gate each model step passes (the agent's SpendPort; undefined without budgets).
 */
import type { SpendPort } from '../../agent/index.ts';
import type { Clock } from '../../clock.ts';
import type { AgentConfig } from '../../config/index.ts';
import type { Feature } from '../../http/feature-mount.ts';
import type { Logger } from '../../log/index.ts';
import type { records } from '../../store/index.ts';
import { createBudgetGate, createLedger, spendReaction } from '../index.ts';
import { usageMount } from './mount.ts';

export interface SpendGiven {
  config: Pick<AgentConfig, 'budgets'>;
  records: records.RecordStore;
  clock: Clock;
  log: Logger;
}

export const spendFeature: Feature<'spend', SpendGiven, SpendPort | undefined> = {
  name: 'spend',
  build({ config: { budgets }, clock, ...given }) {
    const log = given.log.child({ component: 'spend' });
    const ledger = createLedger(given.records, { timeZone: budgets?.timeZone ?? 'UTC', log });
    const mount = { ...usageMount({ clock, ledger, budgets }), reactions: [spendReaction(ledger)] };
    return { mount, port: budgets && createBudgetGate(budgets, ledger, () => clock.now()) };
  },
};
