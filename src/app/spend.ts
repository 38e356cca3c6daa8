/**
 * createApp's spend: the ledger of model steps (priced or not) on the sessions' record store (filled by its reaction,
 * read by the usage report: both in the mount this makes) and, with `budgets`, the gate each model step passes.
 */
import type { SpendPort } from '../agent/index.ts';
import type { Clock } from '../clock.ts';
import type { AgentConfig } from '../config/index.ts';
import type { Logger } from '../log/index.ts';
import type { records } from '../store/index.ts';
import { createBudgetGate, createLedger, spendReaction } from '../spend/index.ts';
import { usageMount } from '../spend/feature/mount.ts';

export function spendOf(
  config: Pick<AgentConfig, 'budgets'>,
  deps: { records: records.RecordStore; clock: Clock; log: Logger },
) {
  const log = deps.log.child({ component: 'spend' });
  const ledger = createLedger(deps.records, { timeZone: config.budgets?.timeZone ?? 'UTC', log });
  const gate: SpendPort | undefined =
    config.budgets && createBudgetGate(config.budgets, ledger, () => deps.clock.now());
  const mount = {
    ...usageMount({ clock: deps.clock, ledger, budgets: config.budgets }),
    reactions: [spendReaction(ledger)],
  };
  return { ledger, gate, mount };
}
