/** Spend in money (issue 74): the ledger of priced steps, its reaction, and the budgets checked before each step. */
export { createLedger, ALL_PRINCIPALS, type Ledger, type SpendEntry, type PeriodTotal } from './ledger.ts';
export { spendReaction, spenderOf, entryOf } from './reaction.ts';
export { createBudgetGate, type BudgetGate } from './gate.ts';
export { periodsOf, type Period } from './periods.ts';
